package stream

// SeqTracker counts received, lost and out-of-order datagrams of one stream
// from their sequence numbers (from 0), the way iperf3 does: a gap counts
// its missing numbers as lost; a number below the highest seen so far is
// out of order and no longer lost. Duplicates are not detected (they count
// as out of order). The zero value is ready.
type SeqTracker struct {
	next       uint64 // highest sequence number seen + 1
	received   uint64
	lost       uint64
	outOfOrder uint64
}

// Add records the arrival of datagram seq.
func (t *SeqTracker) Add(seq uint64) {
	t.received++
	switch {
	case seq == t.next:
		t.next++
	case seq > t.next:
		t.lost += seq - t.next
		t.next = seq + 1
	default: // late: it was counted as lost when the gap opened
		t.outOfOrder++
		if t.lost > 0 {
			t.lost--
		}
	}
}

// Finish accounts for the datagrams at the end that never arrived, given
// how many the sender sent.
func (t *SeqTracker) Finish(sent uint64) {
	if sent > t.next {
		t.lost += sent - t.next
		t.next = sent
	}
}

// Received is the number of datagrams that arrived.
func (t *SeqTracker) Received() uint64 { return t.received }

// Lost is the number of datagrams missing so far.
func (t *SeqTracker) Lost() uint64 { return t.lost }

// OutOfOrder is the number of datagrams that arrived after a later one.
func (t *SeqTracker) OutOfOrder() uint64 { return t.outOfOrder }

// Expected is the number of datagrams sent as far as the tracker can tell
// (highest sequence number seen + 1, or what Finish was told).
func (t *SeqTracker) Expected() uint64 { return t.next }
