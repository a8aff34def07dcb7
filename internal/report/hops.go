package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/report/figure"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// addHops adds, for a run over a chain of hosts, Zismer's (2016) figures 15
// and 16: per test its headline against the hops from the first host,
// and for latency the sum of the segments on the way beside it, with a
// table of both. Runs without a chain add nothing.
func (r *Report) addHops(cases []analysis.Case, series []string) {
	colour := map[string]int{}
	for i, s := range series {
		colour[s] = i
	}
	for ti, ht := range analysis.Hops(cases) {
		latency := registry.Has(ht.Workload, workload.RoundTrip)
		groups := make([]string, len(ht.Hops))
		at := map[int]int{}
		for i, k := range ht.Hops {
			groups[i], at[k] = strconv.Itoa(k), i
		}
		bc := figure.BarChart{Title: ht.Label + ": " + ht.Metric.Title + " against hops", Subtitle: betterWord(ht.Metric.HigherIsBetter),
			XLabel: "Hops from the first host", YLabel: ht.Metric.Title + " (" + ht.Metric.Unit + ")", Groups: groups}
		t := Table{ID: fmt.Sprintf("tab-hops%d", ti), Title: "Hops: " + ht.Label,
			Columns: []string{"mode", "hops", ht.Metric.Title + " (" + ht.Metric.Unit + ")", "× one hop"}}
		if latency {
			t.Columns = append(t.Columns, "sum of the segments ("+ht.Metric.Unit+")", "measured − sum ("+ht.Metric.Unit+")", "added per hop past the first ("+ht.Metric.Unit+")")
			t.Caption = "Mean ± sample standard deviation over the repetitions from the first host's container to the one so many hops away, beside the sum of the segments' means on the way (each segment measured alone, host i to host i+1; segment 1 is the one-hop case), as Zismer's (2016) figure 15. Measured less the sum is what crossing the hosts costs beyond their links; a segment alone also pays both ends' own work, which a longer path pays once, so where that work outweighs the links the sum overstates the path. Added per hop: (k hops − 1 hop) / (k − 1), what each host crossed adds."
		} else {
			t.Caption = "Mean ± sample standard deviation over the repetitions from the first host's container to the one so many hops away, and the share of the one-hop figure left (Zismer's (2016) figure 16)."
		}
		measured := map[string]*figure.BarSeries{}
		summed := map[string]*figure.BarSeries{}
		var order []string
		for _, row := range ht.Rows {
			if measured[row.Series] == nil {
				order = append(order, row.Series)
				measured[row.Series] = &figure.BarSeries{Name: row.Series, Mean: nans(len(groups)), SD: nans(len(groups)),
					Color: figure.SeriesColor(colour[row.Series])}
				summed[row.Series] = &figure.BarSeries{Name: row.Series + ", segments summed", Mean: nans(len(groups)),
					Color: figure.SeriesColor(len(series) + colour[row.Series])}
			}
			i := at[row.Hops]
			measured[row.Series].Mean[i], measured[row.Series].SD[i] = row.Mean, row.SD
			summed[row.Series].Mean[i] = row.SegmentSum
			cells := []Cell{{Text: row.Series}, {Text: strconv.Itoa(row.Hops)}, {Text: f(row.Mean, prec(row.Mean)) + " ± " + f(row.SD, prec(row.SD))}, value(row.OfFirst)}
			if latency {
				cells = append(cells, value(row.SegmentSum), value(row.Excess), value(row.PerHop))
			}
			t.Rows = append(t.Rows, cells)
		}
		for _, s := range order {
			bc.Series = append(bc.Series, *measured[s])
			if latency {
				bc.Series = append(bc.Series, *summed[s])
			}
		}
		if len(bc.Series) == 0 {
			continue
		}
		caption := "Mean with its sample standard deviation (error bar) over the repetitions, per mode and hops from the first host."
		if latency {
			caption += " Beside each mode's bar, the sum of its segments' latencies to the same host."
		}
		r.addBars(fmt.Sprintf("fig-hops%d", ti), bc.Title, caption, bc)
		r.Tables = append(r.Tables, t)
	}
}

func nans(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// value renders a number with prec's decimals, "–" for none.
func value(v float64) Cell { return Cell{Text: f(v, prec(v))} }
