package report

import (
	"errors"
	"fmt"
	"io"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// ReadRun reads a run directory's metadata and ping-pong samples, telling
// warn what it had to skip. Its errors are bad input: a directory that is
// not a readable run (missing, no or a damaged run.json, one naming no
// modes, no samples.jsonl).
func ReadRun(dir string, warn io.Writer) (*record.Meta, []record.Sample, error) {
	rd, err := record.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	var meta record.Meta
	if err := rd.Meta(&meta); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := CheckMeta(dir, meta); err != nil {
		return nil, nil, err
	}
	samples, rep, err := rd.PingPong()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(warn, "cnperf: %s: %s\n", dir, p)
	}
	return &meta, samples, nil
}

// Summary writes the text tables of a run read by ReadRun: per series,
// medians and ratios to the reference (or the socket tests' cases), the
// spread of lab instances and the driver comparison; with header, a first
// line describing the run. Notes on what it skipped go to warn.
func Summary(w, warn io.Writer, dir string, meta *record.Meta, samples []record.Sample, header bool) error {
	if header {
		fmt.Fprintf(w, "%s  %s  status %s  %s, %d CPUs, kernel %s\n\n", meta.Spec.Name, meta.Started.Format("2006-01-02 15:04"), meta.Status,
			meta.Machine.CPUModel, meta.Machine.CPUs, meta.Machine.Kernel)
	}
	if warning := meta.Disturbance().Warning(); warning != "" {
		fmt.Fprintf(w, "warning: %s\n\n", warning)
	}
	ref := meta.Spec.ReferenceKey()
	if meta.Spec.Socket() {
		runs, notes := Load([]string{dir})
		for _, n := range notes {
			fmt.Fprintf(warn, "cnperf: %s\n", n)
		}
		if len(runs) == 0 {
			return errors.New(dir + ": cannot read the run")
		}
		cases := SocketCases(runs, ref, DefaultOptions().Same)
		if len(cases) == 0 {
			_, err := fmt.Fprintln(w, "no socket test finished in this run")
			return err
		}
		if err := WriteSocketTables(w, cases, ref); err != nil {
			return err
		}
		if err := WriteIntervalTable(w, RunIntervals(runs[0], ref, DefaultOptions().Same), ref); err != nil {
			return err
		}
		// A driver comparison adds docker against netns per mode.
		return WriteDriverTable(w, DriverRows(runs[0], DefaultOptions().Same))
	}
	keys := meta.SeriesKeys()
	set := analysis.NewPingPongSet(samples, CellRates(*meta), keys)
	if err := WritePingPongTable(w, set.Rows(ref), ref); err != nil {
		return err
	}
	if err := WriteIntervalTable(w, RunIntervals(Run{Meta: *meta, Samples: samples}, ref, 0), ref); err != nil {
		return err
	}
	// Several lab instances per mode: how far apart they ran.
	spread := analysis.InstanceSpread(samples, CellUnits(*meta), keys, ref, meta.Spec.LabInstances())
	if err := WriteInstanceTable(w, spread); err != nil {
		return err
	}
	pairs := analysis.DriverPairs(keys, meta.SplitSeries)
	return WriteDriverTable(w, analysis.PingPongDrivers(set, pairs))
}
