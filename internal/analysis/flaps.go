package analysis

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// FlapEffect is what one flap of a link did to one client of a cell: how
// long its traffic stalled, how long it took to recover, what TCP
// retransmitted and which requests failed, from the client's reporting
// intervals. Times are seconds since the cell's clients started; the
// clients' intervals count from their own start, a few milliseconds
// later, so a stall is known to an interval's length.
type FlapEffect struct {
	Series   string
	Cell     int
	Case     string
	Rep      int
	Workload string // stream or rr (crr, udp rr alike)
	Client   string // a fan-out's client (record.Client, process); "" for one
	Link     string
	Down, Up float64 // when the link went down and came up again
	// Component and Ready, for a disruption of a test cluster's daemon:
	// the daemon (Link its node) and when it did its job again (0:
	// unknown); the stall is looked for up to a few seconds past Ready.
	// NewPod is the time from a pod created on the node at Down to its
	// first answer (0: NewPodError says why).
	Component   string
	Ready       float64
	NewPod      float64
	NewPodError string
	// Stall is the longest run of the client's intervals that moved
	// nothing (bytes for a stream, transactions for rr) around the flap,
	// in seconds; StallIntervals how many intervals that run has.
	Stall          float64
	StallIntervals int
	// Recover is the time from the link's up to the end of the first
	// interval that moved at least 90 % of the rate before the flap; NaN
	// when none did before the test ended.
	Recover float64
	// PreRate is the client's rate before the flap (bytes or
	// transactions per second, its intervals before Down).
	PreRate float64
	// Retransmits are a stream's sender retransmits in the intervals from
	// the flap to its recovery (or the test's end); for rr the client
	// connections' whole-cell TCP_INFO retransmits, -1 where none was read.
	Retransmits int64
	// Lost are rr's requests lost in the window (udp: timed out); Worst
	// rr's longest round trip (µs): the cell's longest (its total's max:
	// one transaction held up by the flap, which an interval's p99 over
	// hundreds hides) or the window's highest interval p99, whichever is
	// higher; NaN for streams.
	Lost  int64
	Worst float64
	// Error is the cell's error, if its client failed (a request that
	// failed for good ends an rr client); for ping-pong NotBeforeFlap
	// when its requests ended before the flap.
	Error string
	// PingPong marks a ping-pong cell's effect (requestFlaps): Requests
	// are the requests that overlapped the flap, Lost those of them that
	// failed, Retries ping's retries among them, Worst their longest
	// latency (µs), Stall the longest gap between successful completions
	// around the flap and Recover the time to the first one after it.
	PingPong bool
	Requests int
	Retries  int64
	// NotDone marks a flap the cell's clients ended before; At is when
	// it was due.
	NotDone bool
	At      float64
}

// flapInterval is the part of a stream's or rr's interval line the flap
// analysis reads: streams' and rr's field names differ.
type flapInterval struct {
	Stream       *int    `json:"stream"`
	Side         string  `json:"side"`
	Start        float64 `json:"start"`
	End          float64 `json:"end"`
	Bytes        float64 `json:"bytes"`
	Retransmits  int64   `json:"retransmits"`
	StartS       float64 `json:"start_s"`
	EndS         float64 `json:"end_s"`
	Transactions float64 `json:"transactions"`
	Lost         int64   `json:"lost"`
	P99          float64 `json:"round_trip_p99_us"`
}

type flapTotal struct {
	TCP *struct {
		Retransmits int64 `json:"retransmits"`
	} `json:"tcp_info"`
	RoundTrip *struct {
		Max float64 `json:"max"`
	} `json:"round_trip_us"`
}

// span is one interval as the analysis sees it.
type span struct {
	start, end, amount float64
	retrans, lost      int64
	p99                float64
}

// flappedCells are the run's cells whose links flapped, by index.
func flappedCells(meta record.Meta) map[int]record.Cell {
	cells := map[int]record.Cell{}
	for _, c := range meta.Cells {
		if len(c.Flaps) > 0 {
			cells[c.Index] = c
		}
	}
	return cells
}

// Flaps finds every cell of the run whose links flapped and, per flap,
// what it did: to each client of a socket test's cell, from its
// intervals (clientFlaps), and to a ping-pong cell's requests, from its
// samples (requestFlaps). series maps a mode to its series name. None for
// a run without flaps: stored runs report as before.
func Flaps(meta record.Meta, c record.Contents, series func(mode string) string) []FlapEffect {
	cells := flappedCells(meta)
	if len(cells) == 0 {
		return nil
	}
	return append(clientFlaps(cells, c.Records, series), requestFlaps(meta, cells, c.PingPong, series)...)
}

// clientFlaps is what each flap did to each client of a socket test's
// cell.
func clientFlaps(cells map[int]record.Cell, recs []record.Record, series func(mode string) string) []FlapEffect {
	type key struct {
		cell          int
		workload, who string
	}
	type group struct {
		first            record.Record
		sender, receiver []span // streams: sum intervals by side; rr: sender
		retrans          int64
		maxRTT           float64 // rr's total: the cell's longest round trip, µs
	}
	groups := map[key]*group{}
	var order []key
	for _, r := range recs {
		if _, ok := cells[r.Cell]; !ok || r.Kind == record.KindLoad {
			continue
		}
		k := key{r.Cell, r.Workload, r.Client + "/" + strconv.Itoa(r.Process)}
		g := groups[k]
		if g == nil {
			g = &group{first: r, retrans: -1}
			groups[k] = g
			order = append(order, k)
		}
		switch r.Kind {
		case "interval":
			var iv flapInterval
			if json.Unmarshal(r.Data, &iv) != nil {
				continue
			}
			switch {
			case iv.Stream != nil && *iv.Stream == -1: // a stream's sum over streams
				s := span{start: iv.Start, end: iv.End, amount: iv.Bytes, retrans: iv.Retransmits, p99: math.NaN()}
				if iv.Side == "receiver" {
					g.receiver = append(g.receiver, s)
				} else {
					g.sender = append(g.sender, s)
				}
			case iv.Stream == nil && iv.EndS > 0: // rr
				g.sender = append(g.sender, span{start: iv.StartS, end: iv.EndS, amount: iv.Transactions, lost: iv.Lost, p99: iv.P99})
			}
		case record.KindTotal:
			var tot flapTotal
			if json.Unmarshal(r.Data, &tot) == nil {
				if tot.TCP != nil {
					g.retrans = tot.TCP.Retransmits
				}
				if tot.RoundTrip != nil {
					g.maxRTT = tot.RoundTrip.Max
				}
			}
		}
	}
	var out []FlapEffect
	for _, k := range order {
		g := groups[k]
		c := cells[k.cell]
		// What arrived is what a flap stalls: a stream's receiver side
		// where it reported one.
		moved := g.receiver
		if len(moved) == 0 {
			moved = g.sender
		}
		if len(moved) == 0 {
			continue
		}
		for _, fl := range c.Flaps {
			if fl.Up == 0 {
				continue // never went down
			}
			e := flapEffect(moved, g.sender, fl)
			e.Series, e.Cell, e.Case, e.Rep, e.Workload = series(g.first.Mode), k.cell, g.first.Case, g.first.Rep, k.workload
			if g.first.Client != "" {
				e.Client = g.first.Client + "/" + strconv.Itoa(g.first.Process)
			}
			e.Error = c.Error
			if k.workload != "stream" {
				e.Retransmits = g.retrans
				if g.maxRTT > 0 && (math.IsNaN(e.Worst) || g.maxRTT > e.Worst) {
					e.Worst = g.maxRTT
				}
			}
			out = append(out, e)
		}
	}
	return out
}

// flapEffect reads one flap's effect from a client's intervals: moved
// (what arrived) and sender (a stream's retransmits; rr's own).
func flapEffect(moved, sender []span, fl record.Flap) FlapEffect {
	e := FlapEffect{Link: fl.Link, Down: fl.Down, Up: fl.Up, Component: fl.Component, Ready: fl.Ready, NewPod: fl.NewPod, NewPodError: fl.NewPodError, Recover: math.NaN(), Worst: math.NaN()}
	slices.SortFunc(moved, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	// The rate before the flap: what the intervals wholly before it
	// moved over their time (the first is left out: a stream's window
	// opens in it).
	var amount, secs float64
	for i, s := range moved {
		if s.end <= fl.Down && (i > 0 || len(moved) == 1) {
			amount += s.amount
			secs += s.end - s.start
		}
	}
	if secs > 0 {
		e.PreRate = amount / secs
	}
	// The longest run of idle intervals that touches the flap (from its
	// down to a few seconds after its up: a TCP retransmission backs off
	// past the flap's end; a restarted daemon reprograms the datapath
	// until it is ready).
	var run float64
	var n int
	for _, s := range moved {
		if s.end < fl.Down || s.start > max(fl.Up, fl.Ready)+5 {
			run, n = 0, 0
			continue
		}
		if s.amount == 0 {
			run += s.end - s.start
			n++
			if run > e.Stall {
				e.Stall, e.StallIntervals = run, n
			}
		} else {
			run, n = 0, 0
		}
	}
	windowEnd := math.Inf(1)
	if e.PreRate > 0 {
		for _, s := range moved {
			if s.end > fl.Up && s.end > s.start && s.amount/(s.end-s.start) >= 0.9*e.PreRate {
				e.Recover = s.end - fl.Up
				windowEnd = s.end
				break
			}
		}
	}
	for _, s := range sender {
		if s.end <= fl.Down || s.start >= windowEnd {
			continue
		}
		e.Retransmits += s.retrans
		e.Lost += s.lost
		if !math.IsNaN(s.p99) && (math.IsNaN(e.Worst) || s.p99 > e.Worst) {
			e.Worst = s.p99
		}
	}
	return e
}

// NotBeforeFlap is a ping-pong flap effect's note when the cell's
// requests were all done before the link went down (or the flap never
// came): there is nothing to say of a stall.
const NotBeforeFlap = "the cell ended before the flap"

// requestFlaps is, for every ping-pong cell whose links flapped and per
// flap, what it did to the cell's requests (samples, each with
// its own start ts and latency): the requests that overlap the flap
// (started before the link came back, ended after it went down), how
// many of them failed and ping's retries among them, the longest latency
// among them (Worst, µs), the longest gap between two successful
// completions around the flap (Stall), the time from the link's up to
// the first success after it (Recover), and the siege's and servers'
// retransmits of the whole cell (TCP_INFO). A cell whose requests all
// ended before the flap, or whose flap was not done, has the note
// NotBeforeFlap rather than a stall.
func requestFlaps(meta record.Meta, cells map[int]record.Cell, samples []record.Sample, series func(mode string) string) []FlapEffect {
	byCell := map[int][]record.Sample{}
	for _, s := range samples {
		if _, ok := cells[s.Cell]; ok {
			byCell[s.Cell] = append(byCell[s.Cell], s)
		}
	}
	var out []FlapEffect
	for _, c := range meta.Cells {
		smp := byCell[c.Index]
		if len(c.Flaps) == 0 || len(smp) == 0 {
			continue // a socket cell, or one that stored no request
		}
		from := c.FlapsFrom
		if from.IsZero() {
			from = c.Start
		}
		lo, hi := smp[0].Size, smp[0].Size
		for _, s := range smp {
			lo, hi = min(lo, s.Size), max(hi, s.Size)
		}
		for _, fl := range c.Flaps {
			if fl.Up == 0 && !fl.NotDone {
				continue // could not be set down: its error is in cells[].flaps
			}
			e := requestFlapEffect(smp, from, fl)
			e.Series, e.Cell, e.Workload = series(c.Mode), c.Index, "pingpong"
			e.Case = fmt.Sprintf("sizes %d–%d", lo, hi)
			e.Retransmits = cellRetransmits(c)
			if c.Error != "" {
				if e.Error != "" {
					e.Error += "; "
				}
				e.Error += c.Error
			}
			out = append(out, e)
		}
	}
	return out
}

// requestFlapEffect reads one flap's effect from a cell's requests; times are
// seconds since from, the flaps' clock.
func requestFlapEffect(smp []record.Sample, from time.Time, fl record.Flap) FlapEffect {
	e := FlapEffect{Link: fl.Link, Down: fl.Down, Up: fl.Up, Recover: math.NaN(), Worst: math.NaN(), PingPong: true, NotDone: fl.NotDone, At: fl.At}
	type req struct {
		start, end float64
		ok         bool
	}
	reqs := make([]req, 0, len(smp))
	lastEnd := math.Inf(-1)
	for _, s := range smp {
		if s.Time.IsZero() {
			continue // never sent
		}
		start := s.Time.Sub(from).Seconds()
		r := req{start, start + s.LatencyMS/1000, s.OK()}
		reqs = append(reqs, r)
		lastEnd = max(lastEnd, r.end)
		if r.start < fl.Up && r.end > fl.Down {
			e.Requests++
			e.Retries += int64(s.Retries)
			if !r.ok {
				e.Lost++
			}
			if us := s.LatencyMS * 1000; math.IsNaN(e.Worst) || us > e.Worst {
				e.Worst = us
			}
		}
	}
	if fl.NotDone || len(reqs) == 0 || lastEnd <= fl.Down {
		e.Error = NotBeforeFlap
		return e
	}
	// The stall: the longest gap between consecutive successful
	// completions that spans part of the flap; with none before (after)
	// it, from the first request's start (to the last request's end), so
	// a stall the cell's end cut short is a lower bound.
	var done []float64
	first := math.Inf(1)
	for _, r := range reqs {
		first = min(first, r.start)
		if r.ok {
			done = append(done, r.end)
		}
	}
	slices.Sort(done)
	edges := append(append([]float64{first}, done...), lastEnd)
	for i := 1; i < len(edges); i++ {
		a, b := edges[i-1], edges[i]
		if a < fl.Up && b > fl.Down && b-a > e.Stall {
			e.Stall = b - a
		}
	}
	for _, t := range done {
		if t > fl.Up {
			e.Recover = t - fl.Up
			break
		}
	}
	return e
}

// cellRetransmits sums what TCP_INFO said the cell's siege and servers
// retransmitted; -1 where none was read.
func cellRetransmits(c record.Cell) int64 {
	n, read := int64(0), false
	if c.TCP != nil {
		n, read = c.TCP.Retransmits, true
	}
	for _, st := range c.ServerTCP {
		if st != nil {
			n, read = n+st.Retransmits, true
		}
	}
	if !read {
		return -1
	}
	return n
}
