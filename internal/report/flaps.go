package report

import (
	"fmt"
	"math"

	"github.com/cnperf/cnperf/internal/analysis"
)

// flapColumns are the link-flap table's columns, in the page and in text.
var flapColumns = []string{"series", "case", "rep", "workload", "link", "down–up s", "stall s", "idle intervals", "recovered after s", "retransmits", "lost", "worst round trip µs", "error"}

const flapCaption = "What each flap of a link (a spec's links[].flap) did to each client of its cell: when the link went down and up (seconds since the clients started), " +
	"the longest run of reporting intervals around it that moved nothing (a stream's received bytes, rr's transactions), the time from the link's up to the end of the first interval back at 90 % of the rate before the flap (– if none), " +
	"a stream's sender retransmits from the flap to that recovery (rr: TCP_INFO's for the whole cell), rr's lost requests in that window and its longest round trip (the cell's longest, or the window's highest interval p99 if higher: one transaction held up by the flap hides in an interval's p99), and the cell's error if a client failed. " +
	"A stall is known to an interval's length. " +
	"A ping-pong row (workload pingpong, its case the cell's sizes) counts requests instead: the requests that overlapped the flap (started before the link's up, ended after its down) and ping's retries among them, " +
	"the stall as the longest gap between two successful completions around the flap, the recovery as the time from the link's up to the first success after it, the siege's and servers' TCP_INFO retransmits of the whole cell, " +
	"the overlapping requests that failed (lost) and their longest latency; a cell whose requests all ended before the flap says so instead."

// flapRow is one effect as table text.
func flapRow(e analysis.FlapEffect) []string {
	what := e.Workload
	if e.Client != "" {
		what += " " + e.Client
	}
	opt := func(v float64, prec int) string {
		if math.IsNaN(v) {
			return "–"
		}
		return f(v, prec)
	}
	retrans := fmt.Sprint(e.Retransmits)
	if e.Retransmits < 0 {
		retrans = "–"
	}
	errText := e.Error
	if errText == "" {
		errText = "–"
	}
	if e.PingPong {
		window, stall := fmt.Sprintf("%.2f–%.2f", e.Down, e.Up), f(e.Stall, 2)
		if e.NotDone {
			window = fmt.Sprintf("not done (due %.2f)", e.At)
		}
		if e.Error == analysis.NotBeforeFlap {
			stall = "–"
		}
		return []string{e.Series, e.Case, "–", what, e.Link, window, stall, fmt.Sprintf("%d requests, %d retries", e.Requests, e.Retries),
			opt(e.Recover, 2), retrans, fmt.Sprint(e.Lost), opt(e.Worst, 0), errText}
	}
	return []string{e.Series, e.Case, fmt.Sprint(e.Rep), what, e.Link, fmt.Sprintf("%.2f–%.2f", e.Down, e.Up),
		f(e.Stall, 2), fmt.Sprint(e.StallIntervals), opt(e.Recover, 2), retrans, fmt.Sprint(e.Lost), opt(e.Worst, 0), errText}
}

// flapTable is the link-flap table of a run's effects.
func flapTable(effects []analysis.FlapEffect) cellTable {
	t := cellTable{id: "tab-flaps", title: "Link flaps", caption: flapCaption, cols: flapColumns,
		heading: "link flaps (per cell and client: stall, recovery, retransmits, lost requests)"}
	for _, e := range effects {
		t.rows = append(t.rows, flapRow(e))
	}
	return t
}

// addFlaps adds, for each run whose links flapped, the link-flap table;
// a run without flaps adds nothing.
func (r *Report) addFlaps() {
	for ri, run := range r.Runs {
		name := func(mode string) string { return seriesName(r.Runs, run, mode) }
		suffix, idSuffix := runSuffix(r.Runs, ri)
		r.addCells(flapTable(analysis.Flaps(run.Meta, run.Contents, name)), suffix, idSuffix)
	}
}
