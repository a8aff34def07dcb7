package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/report"
)

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	o := report.DefaultOptions()
	var out, figures, tables string
	cmd := &cobra.Command{
		Use:   "report RUN_DIR... [-o report.html]",
		Short: "Write the papers' figures and tables for one or more runs as one self-contained HTML file",
		Example: `  cnperf report runs/quick-20261122-001150
  cnperf report runs/a runs/b -o compare.html --figures figs --tables tables`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.Bins < 1 || o.Bins > 10000:
				return usagef("--bins %d: must be in 1..10000", o.Bins)
			case o.SplitK <= 0:
				return usagef("--split-k %g: must be > 0", o.SplitK)
			case o.Same < 0:
				return usagef("--same %g: must be >= 0", o.Same)
			case o.Smooth < 1:
				return usagef("--smooth %d: must be >= 1", o.Smooth)
			}
			runs, notes := report.Load(args)
			r, err := report.Build(runs, notes, o)
			if err != nil {
				for _, n := range notes {
					fmt.Fprintf(stderr, "cnperf: %s\n", n)
				}
				return fail(errors.New("nothing to report: " + err.Error()))
			}
			if out == "" {
				out = "report.html"
				if len(args) == 1 {
					out = filepath.Join(args[0], "report.html")
				}
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
	f.IntVar(&o.Bins, "bins", o.Bins, "message-size bins for medians, bands and loss")
	f.Float64Var(&o.SplitK, "split-k", o.SplitK, "small/big messages split at K x the TCP receive window")
	f.Float64Var(&o.Same, "same", o.Same, "a change below this many percent counts as the same as the reference")
	f.IntVar(&o.Smooth, "smooth", o.Smooth, "bins averaged for drawn lines and bands")
	return cmd
}
