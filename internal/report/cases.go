package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/report/figure"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// addCases adds the figures and tables of the cases measured over
// repetitions: per test, bar charts of each metric's mean ± SD per mode
// and swept value (Zismer 2016), and per case a table with every metric's
// change against the reference (the 2017 Coherence thesis, Tables 7-15).
func (r *Report) addCases(cases []analysis.Case, series []string, o Options) {
	// Cases of one test, in order: a test's sweep values form one chart.
	var tests [][]analysis.Case
	for _, c := range cases {
		// A chain's test sweeps hops, then segments: a chart each.
		if n := len(tests); n > 0 && tests[n-1][0].Test == c.Test && tests[n-1][0].Param == c.Param && testLabel(tests[n-1][0]) == testLabel(c) {
			tests[n-1] = append(tests[n-1], c)
			continue
		}
		tests = append(tests, []analysis.Case{c})
	}
	colour := map[string]int{}
	for i, s := range series {
		colour[s] = i
	}
	against := ""
	if r.Reference != "" {
		against = "; in brackets the change of the mean against " + r.refText() + ", green where better, red where worse, grey within " + fmt.Sprint(o.Same) + " %" +
			" (for counts, such as retransmits or lost datagrams, the difference of the counts, not a percentage)"
	}
	for ti, group := range tests {
		label := testLabel(group[0])
		param := group[0].Param
		groups := make([]string, len(group))
		for i, c := range group {
			groups[i] = c.Value
		}
		for _, m := range group[0].SummaryMetrics() {
			bc := figure.BarChart{Title: label + ": " + m.Title, Subtitle: betterWord(m.HigherIsBetter), XLabel: paramLabel(group[0]),
				YLabel: m.Title + " (" + m.Unit + ")", Groups: groups}
			for _, s := range series {
				bs := figure.BarSeries{Name: s, Mean: nans(len(group)), SD: nans(len(group)), Color: figure.SeriesColor(colour[s])}
				has := false
				for i, c := range group {
					for _, row := range c.Rows {
						if row.Series == s {
							st := row.Stats[m.Key]
							bs.Mean[i], bs.SD[i] = st.Mean.Value, st.SD.Value
							has = has || !math.IsNaN(st.Mean.Value)
						}
					}
				}
				if has {
					bc.Series = append(bc.Series, bs)
				}
			}
			if len(bc.Series) == 0 {
				continue
			}
			what := "per mode"
			if param != "" {
				what = "per mode and " + param
			}
			r.addBars(fmt.Sprintf("fig-test%d-%s", ti, m.Key), bc.Title,
				fmt.Sprintf("Mean %s with its sample standard deviation (error bar) over the repetitions, %s.", strings.ToLower(m.Title), what), bc)
		}
		for ci, c := range group {
			reps := 0
			for _, row := range c.Rows {
				reps = max(reps, row.N)
			}
			t := Table{ID: fmt.Sprintf("tab-test%d-%d", ti, ci), Title: c.Label,
				Caption: fmt.Sprintf("Mean ± sample standard deviation over %d repetition(s)%s. CPU and memory: the client's process and the server's over the cell, from their cgroups (containers) or rusage and /proc (plain processes); machine CPU: busy share of all cores and of the busiest core each second while the cell ran.", reps, against),
				Columns: []string{"mode", "repetitions"}}
			for _, m := range c.Metrics {
				t.Columns = append(t.Columns, m.Title+" ("+m.Unit+")")
			}
			for _, row := range c.Rows {
				cells := []Cell{{Text: row.Series}, {Text: fmt.Sprint(row.N)}}
				for _, m := range c.Metrics {
					cells = append(cells, meanSD(row.Stats[m.Key]))
				}
				t.Rows = append(t.Rows, cells)
			}
			r.Tables = append(r.Tables, t)
		}
	}
	// the 2017 Coherence thesis's summary: min, max, mean and SD per metric and mode.
	for i, c := range cases {
		t := Table{ID: fmt.Sprintf("tab-summary-case%d", i), Title: "Summary: " + c.Label,
			Caption: "Over the repetitions, per metric and mode: minimum, maximum, mean and sample standard deviation, each with its change against the reference's same statistic (as the 2017 Coherence thesis's Tables 7-15; for counts, such as retransmits or lost datagrams, the difference of the counts); " +
				"the 95 % interval of the mean's change, from the repetitions, each paired with the reference's, and the variance between lab instances, pooled over the modes (docs/report.md).",
			Columns: []string{"metric", "mode", "n", "min", "max", "mean", "SD", "mean: 95 % CI"}}
		for _, m := range c.Metrics {
			for _, row := range c.Rows {
				st := row.Stats[m.Key]
				t.Rows = append(t.Rows, []Cell{{Text: m.Title + " (" + m.Unit + ")"}, {Text: row.Series}, {Text: fmt.Sprint(st.N)},
					change(st.Min), change(st.Max), change(st.Mean), change(st.SD), r.ciCell(c.Label, row.Series, m.Key, st.Mean)})
			}
		}
		r.Tables = append(r.Tables, t)
	}
}

// paramLabel names a swept parameter on an axis, with its unit.
func paramLabel(c analysis.Case) string {
	if w, ok := registry.Lookup(c.Workload); ok {
		if pt, ok := w.(workload.ParamTitler); ok {
			if title := pt.ParamTitle(c.Param, c.Protocol); title != "" {
				return title
			}
		}
	}
	if title, ok := paramTitles[c.Param]; ok {
		return title
	}
	return c.Param
}

// paramTitles name the swept parameters on an axis, with their units.
var paramTitles = map[string]string{
	"length":    "Datagram size (bytes)",
	"parallel":  "Parallel streams",
	"rate":      "Target rate (bits/s)",
	"request":   "Request size (bytes)",
	"response":  "Response size (bytes)",
	"clients":   "Client containers",
	"servers":   "Server containers",
	"processes": "Clients per container",
	"hops":      "Hops from the first host",
	"segment":   "Segment (host i to host i+1)",
}

// testLabel is a case's test without its swept value.
func testLabel(c analysis.Case) string {
	if c.Param == "" {
		return c.Label
	}
	return strings.TrimSuffix(c.Label, " "+c.Param+"="+c.Value)
}

// meanSD renders "mean ± SD (change)", coloured by the mean's change.
func meanSD(st analysis.CaseStat) Cell {
	m := st.Mean
	if math.IsNaN(m.Value) {
		return Cell{Text: "–"}
	}
	t := f(m.Value, prec(m.Value))
	if sd := st.SD.Value; !math.IsNaN(sd) {
		t += " ± " + f(sd, prec(sd))
	}
	return Cell{Text: t + changeText(m), Class: m.Class}
}

// addBars adds a bar chart.
func (r *Report) addBars(id, title, caption string, c figure.BarChart) {
	c.IDPrefix = id + "-"
	r.addChart(id, title, caption, c)
}
