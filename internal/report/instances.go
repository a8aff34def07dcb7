package report

import (
	"fmt"
	"math"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// Cells maps each cell of a run to when it ran, its mode, chunk and lab
// instance, and the requests per second of a finished cell
// (record.Cell.Rate), so that ratios pair cells that sent the same sizes.
func Cells(m record.Meta) map[int]analysis.Cell {
	out := make(map[int]analysis.Cell, len(m.Cells))
	for _, c := range m.Cells {
		out[c.Index] = analysis.Cell{Start: c.Start, End: c.End, Mode: c.Mode, Chunk: c.Chunk, Instance: c.Instance, Rate: c.Rate(), Daemons: c.Daemons, Kernel: c.Kernel, Conntrack: c.Conntrack}
	}
	return out
}

// addInstances adds, for each run with several instances of each lab, the
// transfer ratio of its sweep of message sizes against the reference per instance: how much the
// luck of one lab instance would have moved the answer.
func (r *Report) addInstances(ref string) {
	for ri, run := range r.Runs {
		n := run.Meta.Spec.LabInstances()
		rows := analysis.Instances(runSweep(run).Case(run.Meta.Spec.Sweep()), ref, "transfer", n)
		if len(rows) == 0 {
			continue
		}
		suffix, idSuffix := runSuffix(r.Runs, ri)
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
