package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/cnperf/cnperf/internal/analysis"
)

// f formats a number for a table; "–" for NaN.
func f(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// prec picks decimals so small values keep two significant digits (at
// most 9 decimals).
func prec(v float64) int {
	switch a := math.Abs(v); {
	case a >= 100:
		return 1
	case a >= 1:
		return 2
	case a == 0 || math.IsNaN(a):
		return 3
	default:
		return max(3, min(1-int(math.Floor(math.Log10(a))), 9))
	}
}

// change renders a value with its % change against the reference.
func change(c analysis.Change) Cell {
	return Cell{Text: f(c.Value, prec(c.Value)) + changeText(c), Class: c.Class}
}

// changeText is a change against the reference as the tables show it
// beside a value: " (+4.6 %)", or for a count its difference, " (+9375)";
// "" for the reference and when there is none.
func changeText(c analysis.Change) string {
	switch {
	case c.Class == "ref":
		return ""
	case c.Count && !math.IsNaN(c.Diff):
		return " (" + signed(c.Diff) + ")"
	case !c.Count && !math.IsNaN(c.Percent):
		return fmt.Sprintf(" (%+.1f %%)", c.Percent)
	}
	return ""
}

// signed renders a difference with its sign: "+9375", "-0.25", "0".
func signed(v float64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%+.*f", prec(v), v)
}

// addRunsTable lists the runs compared, with what describes their systems.
func (r *Report) addRunsTable() {
	runs := Table{ID: "tab-runs", Title: "Runs", Caption: "The runs in this report and the systems they measured.",
		Columns: []string{"run", "status", "started", "machine", "CPUs", "kernel", "TCP rcv window", "modes", "samples"}}
	for _, run := range r.Runs {
		m := run.Meta
		n := len(run.PingPong) + measured(run.Records)
		runs.Rows = append(runs.Rows, []Cell{{Text: run.Label}, {Text: m.Status}, {Text: m.Started.Format("2006-01-02 15:04")},
			{Text: m.Machine.CPUModel}, {Text: fmt.Sprint(m.Machine.CPUs)}, {Text: m.Machine.Kernel},
			{Text: fmt.Sprint(m.ReceiveWindow)}, {Text: strings.Join(m.SeriesKeys(), ", ")}, {Text: fmt.Sprint(n)}})
	}
	r.Tables = append(r.Tables, runs)
}

func (r *Report) addTables(d analysis.Dataset, o Options) {
	// Summary tables (the 2017 Coherence thesis, Tables 7-15).
	r.metricsShown = metrics(d, r)
	for _, m := range r.metricsShown {
		t := Table{ID: "tab-summary-" + m.Key, Title: fmt.Sprintf("%s (%s), %s", m.Title, m.Unit, betterWord(m.HigherIsBetter)),
			Caption: summaryCaption(d, o),
			Columns: []string{"mode", "samples", "min", "max", "mean", "median", "SD", "5th pct", "95th pct", "median: 95 % CI"}}
		for _, row := range d.Summary(m, o.Same, o.Bins) {
			t.Rows = append(t.Rows, []Cell{{Text: row.Series}, {Text: fmt.Sprint(row.N)}, change(row.Min), change(row.Max),
				change(row.Mean), change(row.Median), change(row.SD), change(row.P5), change(row.P95), r.ciCell("", row.Series, m.Key, row.Median)})
		}
		r.Tables = append(r.Tables, t)
	}

	// Small and big messages (Kratzke and Quint 2015, Tables II and III).
	if d.Reference != "" && r.Split > 0 {
		g := d.Grouping(o.Bins)
		cut := ", the group at the split cut in two"
		if g.PerSize() {
			cut = "" // no group holds two sizes
		}
		t := Table{ID: "tab-smallbig", Title: "Small and big messages",
			Caption: fmt.Sprintf("Each mode relative to %s for messages below and from %g × the TCP receive window (%d bytes) up, over like sizes: %s%s, the mode's median over %s's, then the median of those ratios on each side. Samples: the mode's requests on each side.", d.Reference, o.SplitK, r.Split, groupingText(g), cut, d.Reference),
			Columns: []string{"mode", "metric", "small: samples", "small: ratio", "big: samples", "big: ratio"}}
		for _, key := range []string{"transfer", "latency", "rps"} {
			m, _ := analysis.MetricByKey(key)
			for _, row := range d.SmallBig(m, r.Split, o.Bins) {
				t.Rows = append(t.Rows, []Cell{{Text: row.Series}, {Text: m.Title}, {Text: fmt.Sprint(row.SmallN)}, ratioCell(row.Small, m, o, row.Series == d.Reference),
					{Text: fmt.Sprint(row.BigN)}, ratioCell(row.Big, m, o, row.Series == d.Reference)})
			}
		}
		r.Tables = append(r.Tables, t)
	} else if r.Split == 0 {
		r.Notes = append(r.Notes, "no TCP receive window in the runs' metadata: the small/big split is left out")
	}

	// Deviation (Kratzke 2015, Table I).
	tm, _ := analysis.MetricByKey("transfer")
	dev := Table{ID: "tab-deviation", Title: "Relative standard deviation of transfer rate",
		Caption: "Per message size with at least two samples, the sample standard deviation over the mean; minimum, average and maximum over sizes, with the data volume.",
		Columns: []string{"mode", "samples", "data volume (MB)", "sizes", "min RSD (%)", "avg RSD (%)", "max RSD (%)"}}
	for _, row := range d.Deviation(tm) {
		dev.Rows = append(dev.Rows, []Cell{{Text: row.Series}, {Text: fmt.Sprint(row.Samples)}, {Text: f(float64(row.Bytes)/1e6, 1)}, {Text: fmt.Sprint(row.Sizes)},
			{Text: f(row.MinRSD, 1)}, {Text: f(row.AvgRSD, 1)}, {Text: f(row.MaxRSD, 1)}})
	}
	r.Tables = append(r.Tables, dev)
}

func summaryCaption(d analysis.Dataset, o Options) string {
	if d.Reference == "" {
		return "Per mode, over every successful request."
	}
	return fmt.Sprintf("Per mode, over every successful request; in brackets the change against %s over like message sizes (%s, the statistic's ratio to %s's; the median of those ratios), green where better, red where worse, grey within %g %%. "+
		"Median: 95 %% CI: the interval of the median's change, from the chunks, each paired with %s's on the same chunk, and the variance between lab instances (docs/report.md).", d.Reference, groupingText(d.Grouping(o.Bins)), d.Reference, o.Same, d.Reference)
}

// groupingText says how the ratios group message sizes, for captions:
// one point per measured size, or groups of equally many sizes.
func groupingText(g analysis.Grouping) string {
	switch {
	case g.PerSize():
		return fmt.Sprintf("per message size, each of the %d measured sizes one point", g.Sizes)
	case !g.Shared:
		return fmt.Sprintf("per size group, %d groups holding equally many of the %d measured sizes (some modes measured no size in common)", g.Groups, g.Sizes)
	}
	return fmt.Sprintf("per size group, %d groups holding equally many of the %d measured sizes", g.Groups, g.Sizes)
}

// ratioCell colours a ratio to the reference by the metric's direction.
func ratioCell(v float64, m analysis.Metric, o Options, isRef bool) Cell {
	switch {
	case math.IsNaN(v):
		return Cell{Text: "–"}
	case isRef:
		return Cell{Text: f(v*100, 1) + " %", Class: "ref"}
	}
	return Cell{Text: f(v*100, 1) + " %", Class: ratioClass(v, o.Same, m.HigherIsBetter)}
}

// ratioClass colours a ratio to another figure: "same" within same % of
// it, else "better" or "worse" by the metric's direction.
func ratioClass(ratio, same float64, higher bool) string {
	switch pct := (ratio - 1) * 100; {
	case math.Abs(pct) < same:
		return "same"
	case (pct > 0) == higher:
		return "better"
	}
	return "worse"
}

// metrics are the metrics the data holds: imported ppbench and ab data
// carry no siege latency (LatencyMS 0), so that table is left out for them.
func metrics(d analysis.Dataset, r *Report) []analysis.Metric {
	outer := false
	for _, s := range d.Series {
		for _, smp := range d.OK[s] {
			if smp.LatencyMS > 0 {
				outer = true
				break
			}
		}
	}
	var ms []analysis.Metric
	for _, m := range analysis.PingPongMetrics() {
		if m.Key == "outer" && !outer {
			r.Notes = append(r.Notes, "no siege latency in the data (imported runs do not have it): its table is left out")
			continue
		}
		ms = append(ms, m)
	}
	return ms
}
