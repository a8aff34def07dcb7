package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/report/export"
)

func newExportCmd(stdout io.Writer) *cobra.Command {
	var format, out, machine, index, ref, stacks string
	var noTimestamps bool
	cmd := &cobra.Command{
		Use:   "export RUN_DIR --format ppbench|samples|openmetrics|opensearch|perfdash | --stacks DIR",
		Short: "Write a run for other tools: ppbench's CSV, flat CSV, OpenMetrics, OpenSearch bulk NDJSON, perfdash JSON or folded stacks",
		Example: `  cnperf export runs/quick-… --format ppbench -o quick.csv
  cnperf export runs/quick-… --format openmetrics -o quick.om   # promtool tsdb create-blocks-from openmetrics quick.om data/
  cnperf export runs/quick-… --format opensearch --index cnperf-results | curl -H 'Content-Type: application/x-ndjson' --data-binary @- http://localhost:9200/_bulk
  cnperf export runs/quick-… --format perfdash -o NetworkPerformance_cnperf.json
  cnperf export runs/quick-… --stacks stacks/   # flamegraph.pl stacks/bridge.folded > bridge.svg`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if stacks != "" {
				return exportStacks(cmd, stdout, args[0], stacks, out)
			}
			if err := export.ValidateFormat(format); err != nil {
				return err
			}
			if err := export.ValidateIndex(index); err != nil {
				return err
			}
			run, err := report.ReadRun(args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := checkReference(ref, run.Meta.SeriesKeys()); err != nil {
				return err
			}
			if err := export.CheckCarries(format, !run.Meta.Spec.RunsPingPong()); err != nil {
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
			if export.IsFeed(format) {
				return fail(export.WriteFeed(w, format, report.Feed(run, ref), export.FeedOptions{Index: index, NoTimestamps: noTimestamps}))
			}
			return fail(export.Run(w, format, &run.Meta, run.PingPong, machine))
		},
	}
	cmd.Flags().StringVar(&format, "format", "ppbench", "ppbench or samples (ping-pong's requests), openmetrics, opensearch or perfdash (ping-pong and socket tests)")
	cmd.Flags().StringVar(&index, "index", export.DefaultIndex, "opensearch: the index the documents go to")
	cmd.Flags().BoolVar(&noTimestamps, "no-timestamps", false, "openmetrics: samples without timestamps, for a Pushgateway (the importer needs them)")
	cmd.Flags().StringVar(&ref, "reference", "", "openmetrics, opensearch, perfdash: mode the ratios compare with (default: the run's reference)")
	cmd.Flags().StringVarP(&out, "out", "o", "", "write to a file instead of stdout")
	cmd.Flags().StringVar(&stacks, "stacks", "", "write each profiled series' stacks, merged over its cells, into this directory as SERIES.folded (flamegraph.pl, inferno, speedscope)")
	cmd.Flags().StringVar(&machine, "machine", "", "ppbench machine tag (default: the run's 'machine' label, else the hostname)")
	return cmd
}

// exportStacks writes a profiled run's folded stacks per series into dir.
func exportStacks(cmd *cobra.Command, stdout io.Writer, runDir, dir, out string) error {
	if cmd.Flags().Changed("format") || out != "" {
		return usagef("--stacks writes one file per series into its directory: it takes no --format or -o")
	}
	run, err := report.ReadRun(runDir, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	written, notes, err := report.ExportStacks(run, dir)
	for _, n := range notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
	}
	for _, p := range written {
		fmt.Fprintln(stdout, p)
	}
	if errors.Is(err, report.ErrNoStacks) || errors.Is(err, record.ErrRunFile) {
		return err // bad input: exit 2
	}
	return fail(err)
}

func newSummaryCmd(stdout io.Writer) *cobra.Command {
	var ref string
	cmd := &cobra.Command{
		Use:   "summary RUN_DIR",
		Short: "Print a run's table: per mode, medians and ratios to the reference",
		Example: `  cnperf summary runs/quick-20261127-130603
  cnperf summary runs/emulation-… --reference flannel-vxlan   # each mode against the real Flannel`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printSummary(stdout, cmd.ErrOrStderr(), args[0], ref, true)
		},
	}
	cmd.Flags().StringVar(&ref, "reference", "", "mode the others are compared with (default: the run's reference)")
	return cmd
}

// printSummary prints a stored run's tables against ref (the run's own
// reference when ""), with a header line describing the run when header
// is set.
func printSummary(stdout, stderr io.Writer, dir, ref string, header bool) error {
	run, err := report.ReadRun(dir, stderr)
	if err != nil {
		return err
	}
	if err := checkReference(ref, run.Meta.SeriesKeys()); err != nil {
		return err
	}
	return fail(report.Summary(stdout, run, ref, header))
}
