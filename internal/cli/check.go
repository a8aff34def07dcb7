package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/gate"
)

// ExitCannotTell is check's exit code when the run cannot tell whether a
// limit holds: an interval straddles it.
const ExitCannotTell = 3

// verdictError carries check's verdict out as an exit code.
type verdictError struct {
	msg  string
	code int
}

func (v verdictError) Error() string { return v.msg }

func newCheckCmd(stdout io.Writer) *cobra.Command {
	var costs, baselines []string
	var limitsFile, junit string
	maxChange := gate.DefaultMaxChange
	cmd := &cobra.Command{
		Use:   "check RUN_DIR (--max-cost MODE:METRIC=PCT... | --limits FILE | --baseline OLD_RUN...)",
		Short: "Exit 0 when every limit holds with 95 % confidence, 1 when one is broken, 3 when the run cannot tell",
		Example: `  cnperf check runs/quick-1 --max-cost bridge:transfer=25 --max-cost overlay:latency=50
  cnperf check runs/quick-2 --baseline runs/quick-1 --max-change 5 --junit check.xml
  cnperf check runs/quick-4 --baseline runs/quick-1 --baseline runs/quick-2 --baseline runs/quick-3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var given *float64
			if cmd.Flags().Changed("max-change") {
				given = &maxChange
			}
			c, err := gate.Gather(costs, limitsFile, baselines, given)
			if err != nil {
				return err
			}
			if junit != "" {
				if err := record.CheckOutput(junit, append(args, baselines...)...); err != nil {
					return err
				}
			}
			warn := cmd.ErrOrStderr()
			results, err := gate.Judge(args[0], c, func(note string) { fmt.Fprintf(warn, "cnperf: %s\n", note) })
			if err != nil {
				return err
			}
			for _, r := range results {
				fmt.Fprintln(stdout, r.Line)
			}
			if junit != "" {
				if err := gate.WriteJUnitFile(junit, args[0], results); err != nil {
					return fail(err)
				}
			}
			switch v, why := gate.Tally(results); v {
			case gate.Broken:
				return verdictError{why, ExitFailure}
			case gate.CannotTell:
				return verdictError{why, ExitCannotTell}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&costs, "max-cost", nil, "MODE:METRIC=PCT: the mode may cost at most PCT % of the metric against the reference (repeatable)")
	f.StringVar(&limitsFile, "limits", "", "YAML file with max_cost: [MODE:METRIC=PCT, ...] and max_change: PCT")
	f.StringArrayVar(&baselines, "baseline", nil, "an older run: each headline ratio may get at most --max-change % worse than in it (repeatable: than in their mean, and their spread tells how much runs differ)")
	f.Float64Var(&maxChange, "max-change", gate.DefaultMaxChange, "with --baseline: how much worse a ratio may get, in %")
	f.StringVar(&junit, "junit", "", "also write the verdicts as JUnit XML to this file")
	return cmd
}

// isVerdict reports check's exit code for err, if it is a verdict.
func isVerdict(err error) (int, bool) {
	var v verdictError
	if errors.As(err, &v) {
		return v.code, true
	}
	return 0, false
}
