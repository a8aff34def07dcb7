package report

import (
	"fmt"
	"io"

	"github.com/cnperf/cnperf/internal/analysis"
)

// Summary writes the text tables of a run read by ReadRun: per series,
// medians and ratios to the reference (a sweep of message sizes) or each
// case's statistics over its repetitions, then, read alike from the run's
// cases, the intervals, the spread of lab instances and the driver
// comparison; with header, a first line describing the run.
func Summary(w io.Writer, run Run, ref string, header bool) error {
	meta := &run.Meta
	if header {
		fmt.Fprintf(w, "%s\n\n", headerLine(meta))
	}
	if warning := meta.Disturbance().Warning(); warning != "" {
		fmt.Fprintf(w, "warning: %s\n\n", warning)
	}
	asked := ref != ""
	if !asked {
		ref = meta.Spec.ReferenceKey()
	}
	runs := run.Views()
	if len(runs) == 1 {
		if err := summarize(w, runs[0], ref, asked); err != nil {
			return err
		}
		return writeRunFindings(w, run)
	}
	// A run of ping-pong and socket tests: each kind's tables in turn.
	for i, view := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n\n", view.Label)
		if err := summarize(w, view, ref, asked); err != nil {
			return err
		}
	}
	return writeRunFindings(w, run)
}

// summarize writes the tables of one run of one kind: a sweep of message
// sizes, or cases over repetitions; named says the reader named ref
// (--reference), which is then every series' reference.
func summarize(w io.Writer, run Run, ref string, named bool) error {
	meta := &run.Meta
	run.named = named
	cases := RunCases(run, ref, DefaultOptions().Same)
	if len(cases) == 0 {
		_, err := fmt.Fprintln(w, "no socket test finished in this run")
		return err
	}
	if sweep := cases[0].Sweep; sweep != nil {
		rows := sweep.RowsWithin(refOf(run, ref))
		if err := WriteSweepTable(w, rows, refShort(run, ref)); err != nil {
			return err
		}
		if err := WriteFailedSizes(w, rows); err != nil {
			return err
		}
		// A socket test's case tables carry the kernel's time as columns;
		// a sweep's, over message sizes, has this table of its own.
		for _, t := range append(tcpTables(*meta), kernelTable(*meta)) {
			if err := t.write(w); err != nil {
				return err
			}
		}
	} else if err := WriteCaseTables(w, cases, refLabel(run, ref)); err != nil {
		return err
	}
	// What links' flaps did (runs with links[].flap only).
	if err := flapTable(analysis.Flaps(run.Meta, run.Contents, func(m string) string { return m })).write(w); err != nil {
		return err
	}
	if err := WriteIntervalTable(w, analysis.IntervalsWithin(cases, refOf(run, ref)), refLabel(run, ref)); err != nil {
		return err
	}
	// Where the CPU went by part of the path (profiled runs only).
	if err := writeAttribution(w, run, ref); err != nil {
		return err
	}
	if err := writeWaterfall(w, run, cases); err != nil {
		return err
	}
	if cases[0].Sweep != nil {
		// Several lab instances per mode: how far apart they ran.
		if err := WriteInstanceTable(w, analysis.Instances(cases[0], ref, "transfer", meta.Spec.LabInstances())); err != nil {
			return err
		}
	}
	// A driver comparison adds docker against netns per mode.
	if err := WriteDriverTable(w, analysis.Drivers(cases, analysis.DriverPairs(meta.SeriesKeys(), meta.SplitSeries))); err != nil {
		return err
	}
	// What the labs' daemons spent at rest (runs that recorded it).
	if err := idleTable(*meta).write(w); err != nil {
		return err
	}
	// NetworkPolicies held and their enforcement times, and the Services
	// and their programming latency (runs with the conditions only).
	if err := WritePolicyTable(w, *meta); err != nil {
		return err
	}
	return WriteServicesTable(w, *meta)
}
