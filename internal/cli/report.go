package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
)

// Bounds of the report's options. The comparisons are written so that NaN
// fails them too.
const (
	maxBins   = 10000
	maxSplitK = 1000 // the papers split at 3 windows; 1000 is past any size sweep
	maxSame   = 100  // percent: at 100 every change counts as the same
)

// checkReportOptions refuses options no report can mean: NaN, infinities,
// negative or absurd values.
func checkReportOptions(o report.Options) error {
	switch {
	case o.Bins < 1 || o.Bins > maxBins:
		return usagef("--bins %d: must be in 1..%d", o.Bins, maxBins)
	case !(o.SplitK > 0 && o.SplitK <= maxSplitK):
		return usagef("--split-k %g: must be a number in (0, %d]", o.SplitK, maxSplitK)
	case !(o.Same >= 0 && o.Same <= maxSame):
		return usagef("--same %g: must be a percentage in [0, %d]", o.Same, maxSame)
	case o.Smooth < 1 || o.Smooth > maxBins:
		return usagef("--smooth %d: must be in 1..%d", o.Smooth, maxBins)
	case !slices.Contains(report.SizeAxes, o.SizeAxis):
		return usagef("--size-axis %q: want %s", o.SizeAxis, strings.Join(report.SizeAxes, ", "))
	}
	return nil
}

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	o := report.DefaultOptions()
	var out, figures, tables, profiles string
	cmd := &cobra.Command{
		Use:   "report RUN_DIR... [-o report.html]",
		Short: "Write the papers' figures and tables for one or more runs as one self-contained HTML file",
		Example: `  cnperf report runs/quick-20261122-001150
  cnperf report runs/a runs/b -o compare.html --figures figs --tables tables`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkReportOptions(o); err != nil {
				return err
			}
			if out == "" {
				out = "report.html"
				if len(args) == 1 {
					out = filepath.Join(args[0], "report.html")
				}
			}
			if err := record.CheckOutput(out, args...); err != nil {
				return err // bad input, refused before the work
			}
			var machines report.Table
			if profiles != "" {
				t, err := machineTable(profiles)
				if err != nil {
					return err // bad input, refused before the work
				}
				machines = t
			}
			runs, notes := report.Load(args)
			if len(runs) == 0 {
				// No argument is a readable run: bad input, as for summary
				// and export; why, on the one line.
				return usagef("nothing to report: %s", strings.Join(notes, "; "))
			}
			r, err := report.Build(runs, notes, o)
			if err != nil {
				if len(notes) > 0 {
					err = fmt.Errorf("%w (%s)", err, strings.Join(notes, "; "))
				}
				return fail(fmt.Errorf("nothing to report: %w", err))
			}
			if err := r.CheckOutputs(out, figures, tables); err != nil {
				return err
			}
			if t, ok := report.ServersTable(runs); ok {
				r.Tables = append(r.Tables, t)
			}
			if profiles != "" {
				r.Tables = append(r.Tables, machines)
			}
			if err := r.WriteHTML(out); err != nil {
				return fail(err)
			}
			if figures != "" {
				if _, err := r.WriteFigures(figures); err != nil {
					return fail(err)
				}
				fmt.Fprintf(stdout, "figures: %s (%d SVG + PNG)\n", figures, len(r.Figures))
			}
			if tables != "" {
				if _, err := r.WriteTables(tables); err != nil {
					return fail(err)
				}
				fmt.Fprintf(stdout, "tables: %s (%d CSV + tables.json)\n", tables, len(r.Tables))
			}
			r.WriteSummary(stdout)
			fmt.Fprintf(stdout, "report: %s (%d figures, %d tables)\n", out, len(r.Figures), len(r.Tables))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "HTML file to write (default RUN_DIR/report.html for one run, else report.html)")
	f.StringVar(&o.Reference, "reference", "", "mode the others are compared with (default: the first run's reference)")
	f.StringVar(&figures, "figures", "", "also write every figure as SVG and PNG into this directory")
	f.StringVar(&tables, "tables", "", "also write every table as CSV, and all numbers as tables.json, into this directory")
	f.IntVar(&o.Bins, "bins", o.Bins, "most message-size groups for medians, bands, loss and ratios (one per size when there are no more sizes)")
	f.Float64Var(&o.SplitK, "split-k", o.SplitK, "small/big messages split at K x the TCP receive window")
	f.Float64Var(&o.Same, "same", o.Same, "a change below this many percent counts as the same as the reference")
	f.IntVar(&o.Smooth, "smooth", o.Smooth, "bins averaged for drawn lines and bands")
	f.StringVar(&o.SizeAxis, "size-axis", o.SizeAxis, "message-size axis of the figures: auto (log when the sizes span more than two decades), log or linear")
	f.StringVar(&profiles, "profiles", "", "comma-separated machine profiles (cnperf machine profile): add their similarity matrix")
	return cmd
}
