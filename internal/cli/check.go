package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

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
	var limitsFile, junit, claims, save string
	maxChange := gate.DefaultMaxChange
	cmd := &cobra.Command{
		Use:   "check RUN_DIR (--max-cost MODE:METRIC=PCT... | --limits FILE | --baseline OLD_RUN... | --claims [PRESET|FILE])",
		Short: "Exit 0 when every limit holds with 95 % confidence, 1 when one is broken, 3 when the run cannot tell",
		Example: `  cnperf check runs/quick-1 --max-cost bridge:transfer=25 --max-cost overlay:latency=50
  cnperf check runs/quick-2 --baseline runs/quick-1 --max-change 5 --junit check.xml
  cnperf check runs/quick-4 --baseline runs/quick-1 --baseline runs/quick-2 --baseline runs/quick-3
  cnperf check runs/kratzke-ab --claims seed004
  cnperf check runs/seed004-… --claims --save docs/findings/seed004.json   # then: go test ./internal/docgen -update`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("claims") {
				return checkClaims(cmd, stdout, args, claims, junit, save)
			}
			if save != "" {
				return usagef("--save: the findings of --claims; give --claims")
			}
			if len(args) > 1 {
				return usagef("check takes one run directory, not %d", len(args))
			}
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
			return verdicts(stdout, args[0], junit, results, "limits", "broken")
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&costs, "max-cost", nil, "MODE:METRIC=PCT: the mode may cost at most PCT % of the metric against the reference (repeatable)")
	f.StringVar(&limitsFile, "limits", "", "YAML file with max_cost: [MODE:METRIC=PCT, ...] and max_change: PCT")
	f.StringArrayVar(&baselines, "baseline", nil, "an older run: each headline ratio may get at most --max-change % worse than in it (repeatable: than in their mean, and their spread tells how much runs differ)")
	f.Float64Var(&maxChange, "max-change", gate.DefaultMaxChange, "with --baseline: how much worse a ratio may get, in %")
	f.StringVar(&junit, "junit", "", "also write the verdicts as JUnit XML to this file")
	f.StringVar(&claims, "claims", "", "judge the paper's claims of a preset or spec file (alone: the run's own spec's): 0 all agree, 1 one differs, 3 the run cannot tell")
	f.Lookup("claims").NoOptDefVal = claimsOfRun
	f.StringVar(&save, "save", "", "with --claims: also write the findings' summary (each claim's ratio and interval, the run's machine and date) as JSON to this file, as docs/findings/ keeps them")
	return cmd
}

// claimsOfRun is --claims given alone: the claims of the run's own spec.
const claimsOfRun = "(the run's)"

// checkClaims is check --claims: "check RUN --claims PRESET" reads as the
// flag alone and PRESET a second argument, which is where the claims come
// from.
func checkClaims(cmd *cobra.Command, stdout io.Writer, args []string, from, junit, save string) error {
	f := cmd.Flags()
	if f.Changed("max-cost") || f.Changed("limits") || f.Changed("baseline") || f.Changed("max-change") {
		return usagef("--claims: judge claims alone, not with --max-cost, --limits or --baseline")
	}
	switch {
	case len(args) == 2 && from != claimsOfRun:
		return usagef("check takes one run directory, not %d", len(args))
	case len(args) == 2:
		from = args[1]
	case from == claimsOfRun:
		from = gate.ClaimsOfRun
	}
	for _, out := range []string{junit, save} {
		if out != "" {
			if err := record.CheckOutput(out, args[0]); err != nil {
				return err
			}
		}
	}
	warn := cmd.ErrOrStderr()
	results, stored, err := gate.JudgeClaims(args[0], from, func(note string) { fmt.Fprintf(warn, "cnperf: %s\n", note) })
	if err != nil {
		return err
	}
	if save != "" {
		b, err := json.MarshalIndent(stored, "", " ")
		if err != nil {
			return fail(err)
		}
		if err := os.WriteFile(save, append(b, '\n'), 0o644); err != nil {
			return fail(err)
		}
	}
	return verdicts(stdout, args[0], junit, results, "claims", "differ")
}

// verdicts prints the results, writes them as JUnit XML when asked, and
// returns their verdict (gate.Tally: of what, the word for broken) as
// the exit code.
func verdicts(stdout io.Writer, run, junit string, results []gate.Result, of, broken string) error {
	for _, r := range results {
		fmt.Fprintln(stdout, r.Line)
	}
	if junit != "" {
		if err := gate.WriteJUnitFile(junit, run, results); err != nil {
			return fail(err)
		}
	}
	switch v, why := gate.Tally(results, of, broken); v {
	case gate.Broken:
		return verdictError{why, ExitFailure}
	case gate.CannotTell:
		return verdictError{why, ExitCannotTell}
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
