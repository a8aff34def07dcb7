package cli

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/report/export"
)

func newExportCmd(stdout io.Writer) *cobra.Command {
	var format, out, machine, index, ref string
	var noTimestamps bool
	cmd := &cobra.Command{
		Use:   "export RUN_DIR --format ppbench|samples|openmetrics|opensearch|perfdash",
		Short: "Write a run for other tools: ppbench's CSV, flat CSV, OpenMetrics, OpenSearch bulk NDJSON or perfdash JSON",
		Example: `  cnperf export runs/quick-… --format ppbench -o quick.csv
  cnperf export runs/quick-… --format openmetrics -o quick.om   # promtool tsdb create-blocks-from openmetrics quick.om data/
  cnperf export runs/quick-… --format opensearch --index cnperf-results | curl -H 'Content-Type: application/x-ndjson' --data-binary @- http://localhost:9200/_bulk
  cnperf export runs/quick-… --format perfdash -o NetworkPerformance_cnperf.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
	cmd.Flags().StringVar(&machine, "machine", "", "ppbench machine tag (default: the run's 'machine' label, else the hostname)")
	return cmd
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
