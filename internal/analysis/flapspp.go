package analysis

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// NotBeforeFlap is a ping-pong flap effect's note when the cell's
// requests were all done before the link went down (or the flap never
// came): there is nothing to say of a stall.
const NotBeforeFlap = "the cell ended before the flap"

// PingPongFlaps finds every ping-pong cell of the run whose links flapped
// and, per flap, what it did to the cell's requests (samples, each with
// its own start ts and latency): the requests that overlap the flap
// (started before the link came back, ended after it went down), how
// many of them failed and ping's retries among them, the longest latency
// among them (Worst, µs), the longest gap between two successful
// completions around the flap (Stall), the time from the link's up to
// the first success after it (Recover), and the siege's and servers'
// retransmits of the whole cell (TCP_INFO). A cell whose requests all
// ended before the flap, or whose flap was not done, has the note
// NotBeforeFlap rather than a stall. None for a run without flaps.
func PingPongFlaps(meta record.Meta, samples []record.Sample, series func(mode string) string) []FlapEffect {
	cells := flappedCells(meta)
	if len(cells) == 0 {
		return nil
	}
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
			e := ppFlapEffect(smp, from, fl)
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

// ppFlapEffect reads one flap's effect from a cell's requests; times are
// seconds since from, the flaps' clock.
func ppFlapEffect(smp []record.Sample, from time.Time, fl record.Flap) FlapEffect {
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
