package report

import (
	"fmt"
	"math"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// CellUnits maps each cell of a run to its chunk and lab instance.
func CellUnits(m record.Meta) map[int]analysis.CellUnit {
	out := make(map[int]analysis.CellUnit, len(m.Cells))
	for _, c := range m.Cells {
		out[c.Index] = analysis.CellUnit{Chunk: c.Chunk, Instance: c.Instance}
	}
	return out
}

// addInstances adds, for each ping-pong run with several instances of each
// lab, the transfer ratio against the reference per instance: how much the
// luck of one lab instance would have moved the answer.
func (r *Report) addInstances(ref string) {
	for ri, run := range r.Runs {
		n := run.Meta.Spec.LabInstances()
		rows := analysis.InstanceSpread(run.Samples, CellUnits(run.Meta), run.Meta.SeriesKeys(), ref, n)
		if len(rows) == 0 {
			continue
		}
		suffix, idSuffix := "", ""
		if len(r.Runs) > 1 {
			suffix, idSuffix = " · "+run.Label, fmt.Sprintf("-%d", ri)
		}
		t := Table{ID: "tab-instances" + idSuffix, Title: "Transfer rate against " + ref + " per lab instance" + suffix,
			Caption: fmt.Sprintf("Every lab was built %d times, apart, and chunk k of the plan ran on instance k mod %d in every mode. "+
				"Each cell is the median over that instance's chunks of the mode's median transfer rate over %s's on the same chunk (the same message sizes); "+
				"the spread is the largest over the smallest, minus one.", n, n, ref),
			Columns: []string{"mode"}}
		for i := range n {
			t.Columns = append(t.Columns, fmt.Sprintf("instance %d", i))
		}
		t.Columns = append(t.Columns, "spread")
		for _, row := range rows {
			cells := []Cell{{Text: row.Mode}}
			for _, x := range row.Ratios {
				cells = append(cells, Cell{Text: f(x, 3)})
			}
			spread := "-"
			if !math.IsNaN(row.Spread) {
				spread = fmt.Sprintf("%.1f %%", 100*row.Spread)
			}
			t.Rows = append(t.Rows, append(cells, Cell{Text: spread}))
		}
		r.Tables = append(r.Tables, t)
	}
}
