package report

// Where the CPU went by part of the path: the attribution of a run's
// sampled stacks (analysis/profile), per case, series and against the
// reference, as one cellTable the summary prints and the page shows.

import (
	"fmt"
	"io"
	"math"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/analysis/profile"
)

const attributionCaption = "Where the CPU went, from the stacks sampled on every CPU during each profiled cell: each sample is charged to the part of the path " +
	"its leaf-most matching frame belongs to (internal/analysis/profile/parts.txt), in CPU time (samples over the sampling rate) per unit of the cell's work " +
	"(µs per request or transaction; s per GB moved where the workload counts bytes alone), the mean over the cells with its 95 % interval (Student's t). " +
	"A series − reference column is the mean of the paired cells' differences with its interval; the parts' differences sum to the total's. " +
	"Other is what no rule named; outside the lab, other processes' and the runner's own work outside softirq; idle samples are left out. " +
	"The kernel's count (/proc/stat, all cores) beside the samples' total says how far the two clocks agree. The last rows say where the samples ran: " +
	"each context's own time, and softirq whatever it interrupted."

// attributionTables are a run's (or a view's) attribution tables, one per
// case; none when no cell was profiled.
func attributionTables(run Run, ref string) ([]cellTable, error) {
	profiled := false
	for _, c := range run.Meta.Cells {
		profiled = profiled || c.Profile != nil
	}
	if !profiled {
		return nil, nil
	}
	tabs, err := attribute(run, refOf(run, ref))
	if err != nil {
		return nil, err
	}
	out := make([]cellTable, len(tabs))
	for i, t := range tabs {
		unit := "µs of CPU per request"
		if t.PerGB {
			unit = "CPU s per GB"
		}
		what := ""
		if t.Case != "" {
			what = " · " + t.Case
		}
		ct := cellTable{id: fmt.Sprintf("tab-attribution-%d", i+1), title: "Where the CPU went, by part of the path" + what, caption: attributionCaption,
			heading: fmt.Sprintf("where the CPU went by part of the path%s (sampled stacks, %s: mean [95 %% interval] over the cells)", what, unit), cols: []string{"part"}}
		for _, s := range t.Series {
			ct.cols = append(ct.cols, fmt.Sprintf("%s (%d cells)", s, t.Cells[s]))
			if ref, ok := t.Refs[s]; ok {
				ct.cols = append(ct.cols, s+" − "+ref)
			}
		}
		for _, r := range t.Rows {
			row := []string{r.Name}
			for _, s := range t.Series {
				row = append(row, ciCell(r.Values[s]))
				if d, ok := r.Diffs[s]; ok {
					row = append(row, diffCell(d))
				}
			}
			ct.rows = append(ct.rows, row)
		}
		out[i] = ct
	}
	return out, nil
}

// attribute is the attribution of a run's profiled cells, each series
// against the one refOf names.
func attribute(run Run, refOf analysis.RefOf) ([]profile.Table, error) {
	in := profile.Input{Dir: run.Dir, Meta: run.Meta, RefOf: refOf, Map: profile.Default()}
	if !run.Sweeps() {
		in.Obs = analysis.Observations(run.Records, run.Costs, nil, Cells(run.Meta), func(m string) string { return m })
	}
	tabs, err := profile.Attribute(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", run.Dir, err)
	}
	return tabs, nil
}

// diffCell is a difference with its interval: "+0.42 [+0.30, +0.54]".
func diffCell(d analysis.DiffInterval) string {
	if d.Units == 0 || math.IsNaN(d.Diff) {
		return "–"
	}
	if math.Abs(d.Diff) < 1e-9 {
		d.Diff = 0 // what equal means leave of a mean of differences
	}
	s := signed(d.Diff)
	if d.Known() {
		s += " " + diffCIText(d, signed)
	}
	return s
}

// writeAttribution prints a run's attribution tables.
func writeAttribution(w io.Writer, run Run, ref string) error {
	tabs, err := attributionTables(run, ref)
	for _, t := range tabs {
		if err := t.write(w); err != nil {
			return err
		}
	}
	return err
}

// addAttribution adds each run's attribution tables to the page; a run
// whose stacks cannot be read says so in the notes.
func (r *Report) addAttribution(ref string) {
	for ri, run := range r.Runs {
		suffix, idSuffix := runSuffix(r.Runs, ri)
		for vi, view := range run.Views() {
			tabs, err := attributionTables(view, ref)
			if err != nil {
				r.Notes = append(r.Notes, "where the CPU went: "+err.Error())
			}
			for _, t := range tabs {
				if vi > 0 {
					t.id += "-tests"
				}
				r.addCells(t, suffix, idSuffix)
			}
		}
	}
}
