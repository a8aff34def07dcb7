package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/machine"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
)

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
			if err := o.Validate(); err != nil {
				return err
			}
			if out == "" {
				out = report.DefaultOut(args)
			}
			if err := record.CheckOutput(out, args...); err != nil {
				return err // bad input, refused before the work
			}
			var machines report.Table
			if profiles != "" {
				ps, err := machine.LoadAll(strings.Split(profiles, ","))
				if err != nil {
					return err // bad input, refused before the work
				}
				machines = machine.SimilarityTable(ps)
			}
			runs, notes := report.Load(args)
			if len(runs) == 0 {
				// No argument is a readable run: bad input, as for summary
				// and export; why, on the one line.
				return usagef("nothing to report: %s", strings.Join(notes, "; "))
			}
			var modes [][]string
			for _, r := range runs {
				modes = append(modes, r.Meta.SeriesKeys())
			}
			if err := checkReference(o.Reference, modes...); err != nil {
				return err
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
