package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/report/figure"
)

// addUnderLoad adds, for runs whose rr probes ran beside a load
// (under_load), flent's RRUL view: a table of the probe's percentiles
// idle and loaded with the inflation and the load's throughput, and per
// series and loaded case the probe's latency and the load's throughput
// against time, as two panels one above the other. A run without load
// adds nothing.
func (r *Report) addUnderLoad() {
	for ri, run := range r.Runs {
		suffix, idSuffix := runSuffix(r.Runs, ri)
		name := func(mode string) string { return seriesName(r.Runs, run, mode) }
		uls := analysis.UnderLoads(run.Records, name)
		if len(uls) == 0 {
			continue
		}
		// In the run's series order (the reference first), not the
		// order the rotated cells happened to finish in.
		rank := map[string]int{}
		for i, m := range run.Meta.SeriesKeys() {
			rank[name(m)] = i
		}
		slices.SortStableFunc(uls, func(a, b analysis.UnderLoad) int { return rank[a.Series] - rank[b.Series] })
		t := Table{ID: "tab-underload" + idSuffix, Title: "Latency under load" + suffix,
			Caption: "The rr probe's round trip idle (its test's under_load 0 case) and beside a TCP load of under_load streams from the same client to the same server host, as flent's RRUL; inflation is loaded ÷ idle (geometric means of the repetitions) with its 95 % interval (Welch's, on logarithms); the load's throughput is its receiver's, averaged over repetitions.",
			Columns: []string{"series", "case", "idle p50 µs", "idle p99 µs", "loaded p50 µs", "loaded p99 µs", "p50 inflation", "p99 inflation", "load Mbit/s", "repetitions idle/loaded"}}
		for _, u := range uls {
			t.Rows = append(t.Rows, []Cell{{Text: u.Series}, {Text: u.Case},
				{Text: f(u.Idle.P50, 1)}, {Text: f(u.Idle.P99, 1)}, {Text: f(u.Loaded.P50, 1)}, {Text: f(u.Loaded.P99, 1)},
				{Text: inflationText(u.P50)}, {Text: inflationText(u.P99)},
				{Text: f(u.LoadBits/1e6, 1)}, {Text: fmt.Sprintf("%d/%d", u.Idle.Reps, u.Loaded.Reps)}})
		}
		r.Tables = append(r.Tables, t)
		for i, u := range uls {
			if len(u.Timeline) == 0 {
				continue
			}
			p50 := figure.Series{Name: "round trip p50"}
			p99 := figure.Series{Name: "round trip p99"}
			load := figure.Series{Name: "load (receiver)"}
			for _, p := range u.Timeline {
				p50.X, p50.Median = append(p50.X, p.T), append(p50.Median, p.P50/1000)
				p99.X, p99.Median = append(p99.X, p.T), append(p99.Median, p.P99/1000)
				load.X, load.Median = append(load.X, p.T), append(load.Median, p.Bits/1e6)
			}
			id := fmt.Sprintf("fig-underload%s-%d", idSuffix, i)
			what := u.Series + ", " + u.Case + suffix
			if u.Idle.Reps > 0 {
				idle := u.Idle.P50 / 1000
				p50.Name = fmt.Sprintf("round trip p50 (idle %s ms)", f(idle, 3))
			}
			r.add(id+"-latency", "Latency under load: "+what,
				"The probe's round-trip percentiles per reporting interval while the load ran (averaged over repetitions by interval; the first intervals are the warm-up, while the load's streams open their windows).",
				figure.Chart{Title: "Latency under load: " + what, Subtitle: "smaller is better", XLabel: "Time since the clients started (s)", YLabel: "Round trip (ms)", Series: []figure.Series{p50, p99}})
			r.add(id+"-load", "Load throughput: "+what,
				"The load's throughput per reporting interval beside the probe above, on the same time axis.",
				figure.Chart{Title: "Load throughput: " + what, Subtitle: "bigger is better", XLabel: "Time since the clients started (s)", YLabel: "Throughput (Mbit/s)", Series: []figure.Series{load}})
		}
	}
}

// inflationText is a ratio with its interval, or the ratio alone when the
// repetitions cannot give one.
func inflationText(iv analysis.Interval) string {
	if math.IsNaN(iv.Ratio) {
		return "–"
	}
	if !iv.Known() {
		return textSig(iv.Ratio, 2) + "×"
	}
	return fmt.Sprintf("%s× [%s, %s]", textSig(iv.Ratio, 2), textSig(iv.Lo, 2), textSig(iv.Hi, 2))
}
