package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/report/export"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

// loadRun reads a run directory's metadata and ping-pong samples, telling
// on stderr what it had to skip. A directory that is not a readable run
// (missing, no or a damaged run.json, one naming no modes, no
// samples.jsonl) is bad input, exit 2, as for every command reading runs.
func loadRun(dir string, warn io.Writer) (*record.Meta, []pingpong.Sample, error) {
	rd, err := record.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	var meta record.Meta
	if err := rd.Meta(&meta); err != nil {
		return nil, nil, usagef("%s: %w", dir, err)
	}
	if err := report.CheckMeta(dir, meta); err != nil {
		return nil, nil, err
	}
	samples, rep, err := rd.PingPong()
	if err != nil {
		return nil, nil, usagef("%s: %w", dir, err)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(warn, "cnperf: %s: %s\n", dir, p)
	}
	return &meta, samples, nil
}

func newExportCmd(stdout io.Writer) *cobra.Command {
	var format, out, machine string
	cmd := &cobra.Command{
		Use:   "export RUN_DIR --format ppbench|samples",
		Short: "Write a run's samples as ppbench's CSV (one row per mode and size) or as flat CSV",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "ppbench" && format != "samples" {
				return usagef("--format %q: want ppbench or samples", format)
			}
			meta, samples, err := loadRun(args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			w := stdout
			if out != "" {
				if err := record.CheckOutput(out, args[0]); err != nil {
					return err // bad input: exit 2
				}
				f, err := os.Create(out)
				if err != nil {
					return fail(err)
				}
				defer f.Close()
				w = f
			}
			if format == "samples" {
				return fail(export.Samples(w, samples))
			}
			if machine == "" {
				machine = meta.Spec.Labels["machine"]
			}
			if machine == "" {
				machine = meta.Machine.Hostname
			}
			return fail(export.PPBench(w, samples, export.PPBenchOptions{MachineTag: machine, Concurrency: meta.Spec.PingPong.Concurrency}))
		},
	}
	cmd.Flags().StringVar(&format, "format", "ppbench", "ppbench or samples")
	cmd.Flags().StringVarP(&out, "out", "o", "", "write to a file instead of stdout")
	cmd.Flags().StringVar(&machine, "machine", "", "ppbench machine tag (default: the run's 'machine' label, else the hostname)")
	return cmd
}

func newSummaryCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "summary RUN_DIR",
		Short: "Print a run's table: per mode, medians and ratios to the reference",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printSummary(stdout, cmd.ErrOrStderr(), args[0], true)
		},
	}
}

// printSummary prints a stored run's per-mode table, with a header line
// describing the run when header is set.
func printSummary(stdout, stderr io.Writer, dir string, header bool) error {
	meta, samples, err := loadRun(dir, stderr)
	if err != nil {
		return err
	}
	if header {
		fmt.Fprintf(stdout, "%s  %s  status %s  %s, %d CPUs, kernel %s\n\n", meta.Spec.Name, meta.Started.Format("2006-01-02 15:04"), meta.Status,
			meta.Machine.CPUModel, meta.Machine.CPUs, meta.Machine.Kernel)
	}
	if meta.Spec.Socket() {
		runs, notes := report.Load([]string{dir})
		for _, n := range notes {
			fmt.Fprintf(stderr, "cnperf: %s\n", n)
		}
		if len(runs) == 0 {
			return fail(fmt.Errorf("%s: cannot read the run", dir))
		}
		cases := report.SocketCases(runs, meta.Spec.ReferenceKey(), report.DefaultOptions().Same)
		if len(cases) == 0 {
			fmt.Fprintln(stdout, "no socket test finished in this run")
			return nil
		}
		if err := analysis.WriteSocketTables(stdout, cases, meta.Spec.ReferenceKey()); err != nil {
			return fail(err)
		}
		// A driver comparison adds docker against netns per mode.
		return fail(analysis.WriteDriverTable(stdout, report.DriverRows(runs[0], report.DefaultOptions().Same)))
	}
	set := analysis.NewPingPongSet(samples, report.CellRates(*meta), meta.Spec.ModeKeys())
	if err := analysis.WriteTable(stdout, set.Rows(meta.Spec.ReferenceKey()), meta.Spec.ReferenceKey()); err != nil {
		return fail(err)
	}
	// Several lab instances per mode: how far apart they ran.
	spread := analysis.InstanceSpread(samples, report.CellUnits(*meta), meta.Spec.ModeKeys(), meta.Spec.ReferenceKey(), meta.Spec.LabInstances())
	if err := analysis.WriteInstanceTable(stdout, spread); err != nil {
		return fail(err)
	}
	pairs := analysis.DriverPairs(meta.Spec.ModeKeys(), meta.Spec.SplitModeKey)
	return fail(analysis.WriteDriverTable(stdout, analysis.PingPongDrivers(set, pairs)))
}
