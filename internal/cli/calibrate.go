package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/analysis"
)

func newCalibrateCmd(stdout io.Writer) *cobra.Command {
	var series string
	cmd := &cobra.Command{
		Use:   "calibrate RUN_DIR [--series NAME]",
		Short: "Derive a reference run's round trip and bandwidth, as conditions for a spec",
		Example: `  cnperf import --format ab logdata.csv -o runs/kratzke-2015 --reference Reference
  cnperf calibrate runs/kratzke-2015`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, notes, err := analysis.ReadCalibration(args[0], series)
			if err != nil {
				return err
			}
			for _, n := range notes {
				fmt.Fprintf(cmd.ErrOrStderr(), "cnperf: %s: %s\n", args[0], n)
			}
			basis := "the smallest messages' time"
			if c.RTTBasis == "throughput" {
				basis = fmt.Sprintf("the smallest messages' time over concurrency %d: a lower bound", c.Concurrency)
			} else if c.Source == "apachebench" {
				basis += ", halved: apachebench timed two hops"
			}
			fmt.Fprintf(stdout, "reference:  %s, run %s, series %s (%s, concurrency %d)\n", args[0], c.Run, c.Series, c.Source, c.Concurrency)
			fmt.Fprintf(stdout, "round trip: %s (%s; %d samples)\n", c.RTT, basis, c.SmallSamples)
			fmt.Fprintf(stdout, "bandwidth:  %.1f Mbit/s, %.2f MB/s (the largest messages; %d samples)\n",
				float64(c.BitsPerSecond)/1e6, float64(c.BitsPerSecond)/8e6, c.LargeSamples)
			fmt.Fprintf(stdout, "\nconditions:\n  bandwidth: %s\n  zone_delay: %s  # one way, between siege+ping and pong\n", c.Bandwidth, yamlDuration(c.ZoneDelay))
			fmt.Fprintf(stdout, "\nor, derived when the run starts:\ncalibrate:\n  from: %s\n  series: %s\n", args[0], c.Series)
			return nil
		},
	}
	cmd.Flags().StringVar(&series, "series", "", "the reference's series (default: the run's reference)")
	return cmd
}

// yamlDuration writes d as a spec reads it back, in ASCII (us, not µs).
func yamlDuration(d time.Duration) string {
	return strings.ReplaceAll(d.String(), "µs", "us")
}
