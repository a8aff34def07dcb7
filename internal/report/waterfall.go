package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/analysis/profile"
	"github.com/cnperf/cnperf/internal/report/figure"
)

// The waterfall of a run whose spec steps through its modes
// (spec.Spec.Waterfall): a table of what each step added, which the
// summary prints and the page shows, and on the page a figure per figure
// stepped, its bars floating from the step before's total to the step's.

const waterfallCaption = "Each mode against the one before it in the spec's order (waterfall: true): what it added to the figure's mean over the repetitions, " +
	"with the 95 % interval of that difference from the repetitions paired with the step before's (the same repetition, next to each other in time) and the variance between lab instances; " +
	"the first row is the base's mean. Round trip from rr; CPU per GB moved (client and server processes) and softirq's share of the machine's busy CPU time (user, system and softirq, every core) from stream."

// stepColumn is a column of the step table: its head and its cell for the
// step from one series to the next (from "": the base). A figure per step
// from elsewhere (what grew in the stacks sampled at that step) is one
// more stepColumn in stepColumns.
type stepColumn struct {
	head string
	cell func(from, to string) string
}

// stepColumns are the step table's columns: the step, then each
// waterfall's added figure with its interval, then, for a profiled run,
// the parts of the path that grew at each step.
func stepColumns(ws []analysis.Waterfall, grew []stepColumn) []stepColumn {
	cols := []stepColumn{{head: "step", cell: func(from, to string) string {
		if from == "" {
			return to + " (base)"
		}
		return from + " → " + to
	}}}
	for _, w := range ws {
		cols = append(cols, stepColumn{head: w.Case + ": " + w.Metric.Short, cell: func(from, to string) string { return addedText(w, from, to) }})
	}
	return append(cols, grew...)
}

// grewColumns are, for a run whose cells were profiled, a column per case
// naming the parts of the path (analysis/profile) whose CPU per unit of
// work grew at each step, the interval of the growth above zero, largest
// first: each series is attributed against the one before it.
func grewColumns(run Run) ([]stepColumn, error) {
	profiled := false
	for _, c := range run.Meta.Cells {
		profiled = profiled || c.Profile != nil
	}
	if !profiled {
		return nil, nil
	}
	series := run.Meta.SeriesKeys()
	prev := map[string]string{}
	for i := 1; i < len(series); i++ {
		prev[series[i]] = series[i-1]
	}
	tabs, err := attribute(run, analysis.Within(prev))
	if err != nil {
		return nil, err
	}
	var cols []stepColumn
	for _, t := range tabs {
		unit := "µs/request"
		if t.PerGB {
			unit = "s/GB"
		}
		cols = append(cols, stepColumn{head: t.Case + ": parts that grew, " + unit, cell: func(from, to string) string {
			if t.Refs[to] != from || from == "" {
				return "–"
			}
			var grew []profile.Row
			for _, r := range t.Rows {
				if d, ok := r.Diffs[to]; ok && r.Kind == profile.KindPart && d.Known() && d.Lo > 0 {
					grew = append(grew, r)
				}
			}
			if len(grew) == 0 {
				return "none"
			}
			slices.SortFunc(grew, func(a, b profile.Row) int { return cmp.Compare(b.Diffs[to].Diff, a.Diffs[to].Diff) })
			var parts []string
			for _, r := range grew[:min(3, len(grew))] {
				parts = append(parts, r.Name+" "+textSigned(r.Diffs[to].Diff))
			}
			return strings.Join(parts, ", ")
		}})
	}
	return cols, nil
}

// addedText is what a step added to a waterfall's figure with its
// interval, the base's total, "–" where the waterfall has no such step,
// and the series it stepped from where that is not the table's row's.
func addedText(w analysis.Waterfall, from, to string) string {
	for _, st := range w.Steps {
		switch {
		case st.Series != to:
			continue
		case st.From == "":
			return textNum(st.Total, textPrec(st.Total))
		}
		s := textSigned(st.Added.Diff) + " " + diffCIText(st.Added, textSigned)
		if st.From != from {
			s += " from " + st.From
		}
		return s
	}
	return "–"
}

// waterfallTable is the step table: a row per series some waterfall has
// a step of, in the run's order, each stepping from the row before.
func waterfallTable(ws []analysis.Waterfall, grew []stepColumn, series []string) cellTable {
	t := cellTable{id: "tab-waterfall", title: "Layer by layer: what each mode adds to the one before it", caption: waterfallCaption,
		heading: "layer by layer: what each mode added to the one before it, 95 % CI (docs/report.md)"}
	cols := stepColumns(ws, grew)
	for _, c := range cols {
		t.cols = append(t.cols, c.head)
	}
	has := map[string]bool{}
	for _, w := range ws {
		for _, st := range w.Steps {
			has[st.Series] = true
		}
	}
	from := ""
	for _, s := range series {
		if !has[s] {
			continue
		}
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = c.cell(from, s)
		}
		t.rows = append(t.rows, row)
		from = s
	}
	return t
}

// writeWaterfall prints the step table of a run whose spec asks for it.
func writeWaterfall(w io.Writer, run Run, cases []analysis.Case) error {
	if !run.Meta.Spec.Waterfall {
		return nil
	}
	series := run.Meta.SeriesKeys()
	grew, err := grewColumns(run)
	if err != nil {
		return err
	}
	return waterfallTable(analysis.Waterfalls(cases, series), grew, series).write(w)
}

// Colours of a waterfall's bars: the base, a step that added, one that took away.
var (
	baseColour = figure.SeriesColor(0)
	upColour   = figure.SeriesColor(1)
	downColour = figure.SeriesColor(3)
)

// addWaterfall adds the step table and a waterfall figure per figure
// stepped, for a report of one run whose spec asks for them.
func (r *Report) addWaterfall() {
	if len(r.Runs) != 1 || !r.Runs[0].Meta.Spec.Waterfall {
		return
	}
	series := r.Runs[0].Meta.SeriesKeys()
	ws := analysis.Waterfalls(r.cases, series)
	grew, err := grewColumns(r.Runs[0])
	if err != nil {
		r.Notes = append(r.Notes, "layer by layer: "+err.Error())
	}
	r.addCells(waterfallTable(ws, grew, series), "", "")
	for i, w := range ws {
		bc := figure.BarChart{Title: w.Case + ": " + w.Metric.Title + ", layer by layer", Subtitle: "each bar: what the mode added to the one before; error bars: its 95 % interval",
			YLabel: w.Metric.Title + " (" + w.Metric.Unit + ")", Groups: []string{""}}
		for _, st := range w.Steps {
			bs := figure.BarSeries{Name: st.Series, Mean: []float64{st.Total}, Color: baseColour}
			if st.From != "" {
				prev := st.Total - st.Added.Diff
				bs.Base, bs.Color = []float64{prev}, upColour
				if st.Added.Diff < 0 {
					bs.Color = downColour
				}
				if st.Added.Known() {
					bs.SD = []float64{(st.Added.Hi - st.Added.Lo) / 2}
				}
			}
			bc.Series = append(bc.Series, bs)
		}
		r.addBars(fmt.Sprintf("fig-waterfall%d", i), bc.Title,
			"Per mode in the spec's order, a bar from the step before's mean over the repetitions to the mode's (the first from 0): red where the mode added, green where it took away; the error bar is the 95 % interval of the difference, as the layer-by-layer table gives it.", bc)
	}
}
