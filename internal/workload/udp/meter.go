package udp

import (
	"sort"
	"time"

	"github.com/cnperf/cnperf/internal/workload/udpseq"
)

// Stats are a listener's counts over one interval or a whole test. Times are
// since the test started (the listener acknowledged the client's start).
type Stats struct {
	Start      time.Duration `json:"start_ns"`
	End        time.Duration `json:"end_ns"`
	Packets    int64         `json:"packets"` // distinct datagrams received
	Bytes      int64         `json:"bytes"`   // their UDP payload bytes
	Lost       int64         `json:"lost"`
	OutOfOrder int64         `json:"out_of_order"`
	Duplicates int64         `json:"duplicates"`
	OffsetSum  int64         `json:"offset_sum"` // sum of out-of-order packets' offsets
	JitterMS   float64       `json:"jitter_ms"`  // RFC 3550 jitter at End
}

// Report is a listener's account of one test.
type Report struct {
	Intervals []Stats `json:"intervals,omitempty"`
	Total     Stats   `json:"total"`
	Sent      int64   `json:"sent"`    // datagrams the sender says it sent
	Invalid   int64   `json:"invalid"` // ignored: corrupt or implausible sequence
}

// Meter turns the arrivals of one flow into per-interval and total Stats. A
// loss is charged to the interval in which its gap appeared; a late arrival
// that fills the gap takes it back from there, so interval losses are never
// negative and add up to the total. The listener owns one Meter per test;
// it is pure and not safe for concurrent use.
type Meter struct {
	interval time.Duration // 0: total only
	tr       udpseq.Tracker
	jit      Jitter
	bytes    int64
	invalid  int64
	ivs      []Stats  // closed intervals
	bounds   []uint64 // Tracker.Next() when each closed
	cur      Stats    // the open interval
}

// NewMeter returns a meter reporting every interval (0: only the total).
func NewMeter(interval time.Duration) *Meter {
	return &Meter{
		interval: interval,
		// Duplicates told apart from late arrivals; corrupt jumps rejected.
		tr:  udpseq.Tracker{Window: udpseq.TrackWindow, MaxJump: udpseq.MaxJump},
		cur: Stats{End: interval},
	}
}

// Add records one datagram of size bytes with sequence seq that arrived at
// (since the test started) after transit (arrival − send time).
func (m *Meter) Add(at time.Duration, seq uint64, size int, transit time.Duration) {
	if m.interval > 0 {
		for at >= m.cur.End {
			m.closeInterval()
		}
	}
	o := m.tr.Observe(seq)
	switch o.Kind {
	case udpseq.Rejected:
		m.invalid++
		return
	case udpseq.Duplicate:
		m.cur.Duplicates++
		return
	case udpseq.InOrder:
		m.cur.Lost += int64(o.Gap)
	case udpseq.Late:
		m.cur.OutOfOrder++
		m.cur.OffsetSum += int64(o.Offset)
		if o.Filled {
			m.unlose(seq)
		}
	}
	m.cur.Packets++
	m.cur.Bytes += int64(size)
	m.bytes += int64(size)
	m.jit.Add(transit)
}

// Invalid counts a datagram that could not be parsed.
func (m *Meter) Invalid() { m.invalid++ }

// MaxRecords bounds the intervals a Meter keeps: when a test has had
// that many, each two neighbours are merged into one and the interval
// doubles, so a long test with a short interval costs bounded memory and
// reports in coarser intervals. Even, so merged intervals stay aligned.
const MaxRecords = 4096

func (m *Meter) closeInterval() {
	m.cur.JitterMS = m.jit.MS()
	m.ivs = append(m.ivs, m.cur)
	m.bounds = append(m.bounds, m.tr.Next())
	if len(m.ivs) >= MaxRecords {
		m.coarsen()
	}
	m.cur = Stats{Start: m.cur.End, End: m.cur.End + m.interval}
}

// coarsen merges each two closed intervals into one and doubles the
// interval.
func (m *Meter) coarsen() {
	n := len(m.ivs) / 2
	for i := range n {
		m.ivs[i] = merge(m.ivs[2*i], m.ivs[2*i+1])
		m.bounds[i] = m.bounds[2*i+1]
	}
	m.ivs, m.bounds = m.ivs[:n], m.bounds[:n]
	m.interval *= 2
}

// merge is interval a and the one after it, b, as one: their counts
// summed, b's end and jitter.
func merge(a, b Stats) Stats {
	return Stats{Start: a.Start, End: b.End, Packets: a.Packets + b.Packets, Bytes: a.Bytes + b.Bytes,
		Lost: a.Lost + b.Lost, OutOfOrder: a.OutOfOrder + b.OutOfOrder, Duplicates: a.Duplicates + b.Duplicates,
		OffsetSum: a.OffsetSum + b.OffsetSum, JitterMS: b.JitterMS}
}

// unlose takes a loss back from the interval whose gap seq fell in.
func (m *Meter) unlose(seq uint64) {
	i := sort.Search(len(m.bounds), func(i int) bool { return seq < m.bounds[i] })
	for ; i < len(m.ivs); i++ {
		if m.ivs[i].Lost > 0 {
			m.ivs[i].Lost--
			return
		}
	}
	m.cur.Lost--
}

// Report closes the test at end (since its start) with sent datagrams sent:
// those after the highest sequence received count as lost in the last
// interval. A last interval shorter than a tenth of the interval is folded
// into the one before. Call it once.
func (m *Meter) Report(end time.Duration, sent int64) Report {
	if m.interval > 0 {
		for m.cur.End <= end {
			m.closeInterval()
		}
		m.cur.End = max(end, m.cur.Start)
		m.cur.JitterMS = m.jit.MS()
		switch n := len(m.ivs); {
		case n > 0 && m.cur.End-m.cur.Start < m.interval/10:
			// A sliver (the stop arriving just after a boundary): fold it
			// into the last interval rather than report a rate over it.
			m.ivs[n-1] = merge(m.ivs[n-1], m.cur)
		case m.cur.End > m.cur.Start || m.cur.Packets > 0 || m.cur.Duplicates > 0 || m.cur.Lost != 0:
			m.ivs = append(m.ivs, m.cur)
		}
	}
	c := m.tr.Counts()
	var tail int64
	if next := m.tr.Next(); sent > 0 && uint64(sent) > next {
		tail = sent - int64(next)
	}
	if tail > 0 && len(m.ivs) > 0 {
		m.ivs[len(m.ivs)-1].Lost += tail
	}
	return Report{
		Intervals: m.ivs,
		Total: Stats{
			End: end, Packets: c.Received, Bytes: m.bytes, Lost: c.Lost + tail,
			OutOfOrder: c.OutOfOrder, Duplicates: c.Duplicates, OffsetSum: c.OffsetSum,
			JitterMS: m.jit.MS(),
		},
		Sent:    sent,
		Invalid: m.invalid,
	}
}
