// Package report turns stored runs into the papers' figures and tables: one
// self-contained HTML file (inline SVG, no network), figures as SVG and PNG
// for papers, and every table as CSV and JSON for scripts.
package report

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/workload"

	"github.com/cnperf/cnperf/internal/record"
)

// Run is one loaded run directory.
type Run struct {
	Dir   string
	Label string // how the run is named when several are compared
	Meta  record.Meta
	// What samples.jsonl holds: ping-pong's samples, the other tests'
	// records, the cells' costs and the machine's CPU while measuring.
	record.Contents
	// named: the reader named the reference (--reference), which every
	// series is then compared with (variantRefs).
	named bool
}

// measured counts a run's records that carry measurements: a
// client's start line says what it was asked to do, not what it measured.
func measured(recs []record.Record) int {
	n := 0
	for _, r := range recs {
		if r.Kind != workload.KindStart {
			n++
		}
	}
	return n
}

// Sweeps reports whether the run swept message sizes (ping-pong); every
// other workload measures cases over repetitions.
func (r Run) Sweeps() bool { return len(r.Records) == 0 && !r.Meta.Spec.Socket() }

// Views are the run as the tables read it: the run itself, or, for a run
// that measured ping-pong and socket tests, one run of each kind, each
// with its spec's part, its cells and its lines, labelled LABEL ping-pong
// and LABEL tests, so that each is read as a run of its kind is.
func (r Run) Views() []Run {
	if !r.Meta.Spec.Mixed() {
		return []Run{r}
	}
	pp, sk := r, r
	pp.Meta.Spec, sk.Meta.Spec = r.Meta.Spec.PingPongOnly(), r.Meta.Spec.SocketsOnly()
	pp.Meta.Cells, sk.Meta.Cells = nil, nil
	for _, c := range r.Meta.Cells {
		if c.Case == "" {
			pp.Meta.Cells = append(pp.Meta.Cells, c)
		} else {
			sk.Meta.Cells = append(sk.Meta.Cells, c)
		}
	}
	pp.Records, pp.Costs, sk.Costs = nil, nil, nil
	for _, c := range r.Costs {
		if c.Test == r.Meta.Spec.Sweep().Name() {
			pp.Costs = append(pp.Costs, c)
		} else {
			sk.Costs = append(sk.Costs, c)
		}
	}
	sk.PingPong, sk.Meta.Sizes = nil, 0
	pp.Label, sk.Label = r.Label+" ping-pong", r.Label+" tests"
	return []Run{pp, sk}
}

// Cases summarises the cases that runs measured over repetitions (every
// workload but ping-pong's sweep of sizes) per case and series (modes, or
// "mode · run" for several runs) against the reference mode.
func Cases(runs []Run, ref string, same float64) []analysis.Case {
	var obs []analysis.Observation
	var series []string
	refSeries := ""
	for _, run := range runs {
		name := func(mode string) string { return seriesName(runs, run, mode) }
		for _, m := range run.Meta.SeriesKeys() {
			series = append(series, name(m))
			// The reference among runs with cases: a sweep of sizes
			// (ping-pong, or the ping-pong of a run of both) has none.
			if m == ref && refSeries == "" && !run.Sweeps() {
				refSeries = name(m)
			}
		}
		obs = append(obs, analysis.Observations(run.Records, run.Costs, run.CPU, Cells(run.Meta), name)...)
	}
	if len(runs) == 1 && variantRefs(runs[0], ref) != nil {
		return analysis.CasesWithin(obs, series, refOf(runs[0], ref), same)
	}
	return analysis.Cases(obs, series, refSeries, same)
}

// seriesName names a run's mode among runs: the mode, or "mode · run"
// when several runs are compared.
func seriesName(runs []Run, run Run, mode string) string {
	if len(runs) > 1 {
		return mode + SeriesSuffix + run.Label
	}
	return mode
}

// runSuffix is what the title and the id of a run's own table add when
// several runs are compared: " · run" and "-i".
func runSuffix(runs []Run, i int) (title, id string) {
	if len(runs) > 1 {
		return SeriesSuffix + runs[i].Label, fmt.Sprintf("-%d", i)
	}
	return "", ""
}

// RunCases are the cases one run measured under its own mode keys: its
// sweep of message sizes (ping-pong) as one case, or its cases measured
// over repetitions. Intervals, the driver comparison and the spread of lab
// instances read them alike.
func RunCases(run Run, ref string, same float64) []analysis.Case {
	if run.Sweeps() {
		return []analysis.Case{runSweep(run).Case(run.Meta.Spec.Sweep())}
	}
	return Cases([]Run{run}, ref, same)
}

// runSweep is a run's samples by mode, cell and size.
func runSweep(run Run) analysis.Sweep {
	return analysis.NewSweep(run.PingPong, Cells(run.Meta), run.Meta.SeriesKeys())
}

// CheckMeta refuses a run.json that decodes but describes no run (an empty
// object, another program's JSON): every run cnperf writes or imports
// names its modes.
func CheckMeta(dir string, m record.Meta) error {
	if len(m.SeriesKeys()) == 0 {
		return fmt.Errorf("%s: run.json names no modes: not a cnperf run", dir)
	}
	return nil
}

// StatusNote says what a run's status means for its samples, or nothing
// for a run that finished.
func StatusNote(dir, status string) string {
	switch status {
	case "complete", "imported":
		return ""
	case "running":
		return fmt.Sprintf("%s: the run did not finish (status running): it was killed, or its end could not be written to run.json; it holds the samples measured before", dir)
	}
	return fmt.Sprintf("%s: the run's status is %q: it holds the samples measured before it stopped", dir, status)
}

// ReadRun reads a run directory whole, telling warn what it had to skip.
// Its errors are bad input: a directory that is not a readable run
// (missing, no or a damaged run.json, one naming no modes, no
// samples.jsonl, a file outside record's bounds).
func ReadRun(dir string, warn io.Writer) (Run, error) {
	r, notes, err := readRun(dir)
	for _, n := range notes {
		fmt.Fprintf(warn, "cnperf: %s\n", n)
	}
	return r, err
}

// readRun reads a run directory, with notes on what it skipped, each
// naming the directory.
func readRun(dir string) (Run, []string, error) {
	r := Run{Dir: dir, Label: filepath.Base(filepath.Clean(dir))}
	rd, err := record.Open(dir)
	if err != nil {
		return r, nil, err
	}
	if err := rd.Meta(&r.Meta); err != nil {
		return r, nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := CheckMeta(dir, r.Meta); err != nil {
		return r, nil, err
	}
	contents, rep, err := rd.Contents()
	if err != nil {
		return r, nil, fmt.Errorf("%s: %w", dir, err)
	}
	r.Contents = contents
	var notes []string
	for _, n := range rep.Notes() {
		notes = append(notes, fmt.Sprintf("%s: %s", dir, n))
	}
	if n := StatusNote(dir, r.Meta.Status); n != "" {
		notes = append(notes, n)
	}
	return r, notes, nil
}

// Load reads run directories, each as the views its tables read (Views).
// A directory that cannot be read is skipped and reported in the returned
// notes; so are damaged sample lines.
func Load(dirs []string) ([]Run, []string) {
	var runs []Run
	var notes []string
	for _, dir := range dirs {
		r, ns, err := readRun(dir)
		if err != nil {
			notes = append(notes, "skipped "+err.Error())
			continue
		}
		notes = append(notes, ns...)
		runs = append(runs, r.Views()...)
	}
	return runs, notes
}
