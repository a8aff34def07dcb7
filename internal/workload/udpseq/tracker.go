// Package udpseq holds what cnperf's UDP workloads share: a tracker of the
// sequence numbers of a datagram flow and a token-bucket pacer.
package udpseq

// TrackWindow is a window (see Tracker.Window) that tells late arrivals from
// duplicates up to a million sequence numbers back, in 128 KiB.
const TrackWindow = 1 << 20

// MaxJump is a limit (see Tracker.MaxJump) that rejects as corrupt a datagram
// more than 2^32 sequence numbers ahead rather than count billions lost.
const MaxJump = 1 << 32

// Kind classifies one arrival.
type Kind int

const (
	InOrder   Kind = iota // above every sequence seen so far (Gap skipped)
	Late                  // below the highest seen, not seen before: out of order
	Duplicate             // seen before; not counted as received
	Rejected              // implausibly far ahead; ignored
)

// Observation is what a Tracker made of one arrival.
type Observation struct {
	Kind   Kind
	Gap    uint64 // InOrder: sequence numbers skipped, newly counted lost
	Offset uint64 // Late: how far behind the highest sequence seen it came
	Filled bool   // Late: it filled a gap that had been counted lost
}

// Counts are a Tracker's totals.
type Counts struct {
	Received   int64 // distinct sequence numbers received
	Lost       int64 // gaps below the highest sequence seen, net of late arrivals
	OutOfOrder int64 // arrivals below the highest sequence seen
	Duplicates int64
	OffsetSum  int64 // sum of the Offsets of out-of-order arrivals
}

// Tracker follows the sequence numbers of one flow that starts at 0: it
// counts received, lost, out-of-order and duplicate packets. A gap counts
// its missing numbers as lost; a number below the highest seen so far is
// out of order and, if anything is lost, takes one loss back. Losses after
// the highest sequence received are invisible to it until Finish.
//
// The zero value is ready and tracks like iperf3: it does not detect
// duplicates (with no Window, they count as out of order) and accepts any
// jump. Set Window and MaxJump before the first Observe to change that.
type Tracker struct {
	// Window is how many sequence numbers behind the highest one the
	// tracker remembers (Window/8 bytes, allocated on first use): a late
	// arrival within it is told apart from a duplicate; one further behind
	// is taken for a late arrival. 0: none.
	Window uint64
	// MaxJump is the largest forward jump of sequence numbers accepted; a
	// datagram further ahead is Rejected. 0: no limit.
	MaxJump uint64

	c    Counts
	next uint64   // highest sequence seen + 1; 0 before any
	bits []uint64 // ring of Window bits: seen sequences in [next-Window, next)
}

// Counts returns the totals so far.
func (t *Tracker) Counts() Counts { return t.c }

// Next is the highest sequence number seen plus one (0 before any), or what
// Finish was told if that is more.
func (t *Tracker) Next() uint64 { return t.next }

func (t *Tracker) bit(seq uint64) (word int, mask uint64) {
	i := seq % t.Window
	return int(i / 64), 1 << (i % 64)
}

// Observe records the arrival of sequence number seq.
func (t *Tracker) Observe(seq uint64) Observation {
	if t.Window > 0 && t.bits == nil {
		t.bits = make([]uint64, (t.Window+63)/64)
	}
	if seq >= t.next {
		gap := seq - t.next
		if t.MaxJump > 0 && gap > t.MaxJump {
			return Observation{Kind: Rejected}
		}
		if t.Window > 0 {
			if gap >= t.Window {
				clear(t.bits)
			} else {
				for s := t.next; s < seq; s++ {
					w, m := t.bit(s)
					t.bits[w] &^= m
				}
			}
			w, m := t.bit(seq)
			t.bits[w] |= m
		}
		t.next = seq + 1
		t.c.Received++
		t.c.Lost += int64(gap)
		return Observation{Kind: InOrder, Gap: gap}
	}
	o := Observation{Kind: Late, Offset: t.next - 1 - seq}
	if t.next-seq <= t.Window {
		w, m := t.bit(seq)
		if t.bits[w]&m != 0 {
			t.c.Duplicates++
			return Observation{Kind: Duplicate}
		}
		t.bits[w] |= m
		o.Filled = true
	} else {
		// Too old to tell (or no Window): take it for a late arrival if
		// anything is lost. Lost is never negative; != 0 keeps a loss count
		// past 2^63 (only from a corrupt jump with no MaxJump) going down.
		o.Filled = t.c.Lost != 0
	}
	t.c.Received++
	t.c.OutOfOrder++
	t.c.OffsetSum += int64(o.Offset)
	if o.Filled {
		t.c.Lost--
	}
	return o
}

// Finish counts as lost the datagrams after the highest sequence received,
// given how many the sender sent. Call it after the last Observe. With a
// MaxJump, a count further than it beyond the highest sequence is ignored,
// as a datagram that far ahead would be.
func (t *Tracker) Finish(sent uint64) {
	if t.MaxJump > 0 && sent > t.next && sent-t.next > t.MaxJump {
		return
	}
	if sent > t.next {
		t.c.Lost += int64(sent - t.next)
		t.next = sent
	}
}
