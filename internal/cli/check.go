package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/check"
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

// defaultMaxChange is how much worse than the baseline a ratio may get.
const defaultMaxChange = 5.0

func newCheckCmd(stdout io.Writer) *cobra.Command {
	var costs, baselines []string
	var limitsFile, junit string
	maxChange := defaultMaxChange
	cmd := &cobra.Command{
		Use:   "check RUN_DIR (--max-cost MODE:METRIC=PCT... | --limits FILE | --baseline OLD_RUN...)",
		Short: "Exit 0 when every limit holds with 95 % confidence, 1 when one is broken, 3 when the run cannot tell",
		Example: `  cnperf check runs/quick-1 --max-cost bridge:transfer=25 --max-cost overlay:latency=50
  cnperf check runs/quick-2 --baseline runs/quick-1 --max-change 5 --junit check.xml
  cnperf check runs/quick-4 --baseline runs/quick-1 --baseline runs/quick-2 --baseline runs/quick-3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			limits, change, err := checkLimits(costs, limitsFile, len(baselines) > 0)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("max-change") || change == nil {
				change = &maxChange
			}
			if junit != "" {
				if err := record.CheckOutput(junit, append(args, baselines...)...); err != nil {
					return err
				}
			}
			results, err := runCheck(cmd.ErrOrStderr(), args[0], limits, baselines, *change)
			if err != nil {
				return err
			}
			for _, r := range results {
				fmt.Fprintln(stdout, r.Line)
			}
			if junit != "" {
				if err := writeJUnit(junit, args[0], results); err != nil {
					return fail(err)
				}
			}
			return verdictOf(results)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&costs, "max-cost", nil, "MODE:METRIC=PCT: the mode may cost at most PCT % of the metric against the reference (repeatable)")
	f.StringVar(&limitsFile, "limits", "", "YAML file with max_cost: [MODE:METRIC=PCT, ...] and max_change: PCT")
	f.StringArrayVar(&baselines, "baseline", nil, "an older run: each headline ratio may get at most --max-change % worse than in it (repeatable: than in their mean, and their spread tells how much runs differ)")
	f.Float64Var(&maxChange, "max-change", defaultMaxChange, "with --baseline: how much worse a ratio may get, in %")
	f.StringVar(&junit, "junit", "", "also write the verdicts as JUnit XML to this file")
	return cmd
}

// checkLimits gathers the limits of the flags and the file.
func checkLimits(costs []string, file string, baseline bool) ([]check.Limit, *float64, error) {
	var limits []check.Limit
	var change *float64
	if file != "" {
		l, c, err := check.ReadFile(file)
		if err != nil {
			return nil, nil, err
		}
		limits, change = l, c
	}
	for _, s := range costs {
		l, err := check.ParseLimit(s)
		if err != nil {
			return nil, nil, err
		}
		limits = append(limits, l)
	}
	if len(limits) == 0 && !baseline {
		return nil, nil, usagef("nothing to check: give --max-cost, --limits or --baseline")
	}
	return limits, change, nil
}

// runCheck judges the run's limits and, with baselines, its change,
// telling warn what reading the runs skipped.
func runCheck(warn io.Writer, dir string, limits []check.Limit, baselines []string, maxChange float64) ([]check.Result, error) {
	run, err := check.Load(dir)
	if err != nil {
		return nil, err
	}
	for _, n := range run.Notes {
		fmt.Fprintf(warn, "cnperf: %s\n", n)
	}
	results, err := check.Limits(run, limits)
	if err != nil {
		return nil, err
	}
	if results, err = check.Disturbed(results, dir); err != nil {
		return nil, err
	}
	if len(baselines) == 0 {
		return results, nil
	}
	var olds []check.Run
	for _, b := range baselines {
		old, err := check.Load(b)
		if err != nil {
			return nil, err
		}
		olds = append(olds, old)
	}
	for _, old := range olds {
		for _, n := range old.Notes {
			fmt.Fprintf(warn, "cnperf: %s\n", n)
		}
	}
	more, err := check.Baseline(run, olds[0], maxChange, olds[1:]...)
	if err != nil {
		return nil, err
	}
	more, err = check.Disturbed(more, append([]string{dir}, baselines...)...)
	return append(results, more...), err
}

func writeJUnit(path, run string, results []check.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := check.WriteJUnit(f, run, results); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// verdictOf turns the results into check's exit: nil when all hold.
func verdictOf(results []check.Result) error {
	n := map[check.Verdict]int{}
	for _, r := range results {
		n[r.Verdict]++
	}
	switch check.Worst(results) {
	case check.Broken:
		return verdictError{fmt.Sprintf("%d of %d limits broken", n[check.Broken], len(results)), ExitFailure}
	case check.CannotTell:
		return verdictError{fmt.Sprintf("the run cannot tell %d of %d limits", n[check.CannotTell], len(results)), ExitCannotTell}
	}
	return nil
}

// isVerdict reports check's exit code for err, if it is a verdict.
func isVerdict(err error) (int, bool) {
	var v verdictError
	if errors.As(err, &v) {
		return v.code, true
	}
	return 0, false
}
