package udptest

// TrackWindow is how many sequence numbers behind the highest one a Tracker
// remembers: a late arrival within it is told apart from a duplicate; one
// further behind is taken for a late arrival.
const TrackWindow = 1 << 20

// MaxJump is the largest forward jump of sequence numbers a Tracker accepts;
// a datagram further ahead is rejected as corrupt rather than counting
// billions of packets lost.
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
// counts received, lost, out-of-order and duplicate packets. Losses after the
// highest sequence received are invisible to it (see Meter.Report). The zero
// value is ready; it keeps TrackWindow bits (128 KiB) once used.
type Tracker struct {
	c    Counts
	next uint64   // highest sequence seen + 1; 0 before any
	bits []uint64 // ring of TrackWindow bits: seen sequences in [next-TrackWindow, next)
}

// Counts returns the totals so far.
func (t *Tracker) Counts() Counts { return t.c }

// Next is the highest sequence number seen plus one (0 before any).
func (t *Tracker) Next() uint64 { return t.next }

func (t *Tracker) bit(seq uint64) (word int, mask uint64) {
	i := seq % TrackWindow
	return int(i / 64), 1 << (i % 64)
}

// Observe records the arrival of sequence number seq.
func (t *Tracker) Observe(seq uint64) Observation {
	if t.bits == nil {
		t.bits = make([]uint64, TrackWindow/64)
	}
	if seq >= t.next {
		gap := seq - t.next
		if gap > MaxJump {
			return Observation{Kind: Rejected}
		}
		if gap >= TrackWindow {
			clear(t.bits)
		} else {
			for s := t.next; s < seq; s++ {
				w, m := t.bit(s)
				t.bits[w] &^= m
			}
		}
		w, m := t.bit(seq)
		t.bits[w] |= m
		t.next = seq + 1
		t.c.Received++
		t.c.Lost += int64(gap)
		return Observation{Kind: InOrder, Gap: gap}
	}
	o := Observation{Kind: Late, Offset: t.next - 1 - seq}
	if t.next-seq <= TrackWindow {
		w, m := t.bit(seq)
		if t.bits[w]&m != 0 {
			t.c.Duplicates++
			return Observation{Kind: Duplicate}
		}
		t.bits[w] |= m
		o.Filled = true
	} else {
		// Too old to tell: take it for a late arrival if anything is lost.
		o.Filled = t.c.Lost > 0
	}
	t.c.Received++
	t.c.OutOfOrder++
	t.c.OffsetSum += int64(o.Offset)
	if o.Filled {
		t.c.Lost--
	}
	return o
}
