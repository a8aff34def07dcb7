package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/report/importer"
)

func newImportCmd(stdout io.Writer) *cobra.Command {
	var format, out, reference string
	var series []string
	var window int
	cmd := &cobra.Command{
		Use:   "import --format ppbench|ab FILE -o DIR",
		Short: "Turn a ppbench or apachebench CSV file into a run directory that summary, export and report read",
		Example: `  cnperf import --format ppbench m3.large.csv -o runs/kratzke-m3
  cnperf import --format ab ab-results.csv -o runs/ab --reference bare
  cnperf import --format ab logdata.csv -o runs/kratzke --series Reference=bare --series Docker=bridge`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			stored, read, err := importer.ReaderFor(format)
			if err != nil {
				return err
			}
			if err := importer.ValidateOut(out); err != nil {
				return err
			}
			if cmd.Flags().Changed("receive-window") {
				if err := importer.ValidateWindow(window); err != nil {
					return err
				}
			}
			path := args[0]
			samples, info, err := importer.ReadFile(path, read)
			for _, p := range info.Problems(path) {
				fmt.Fprintf(cmd.ErrOrStderr(), "cnperf: %s\n", p)
			}
			if err != nil {
				return err // bad input: not a regular file, no header, missing column, no usable row
			}
			if err := importer.Rename(samples, series); err != nil {
				return err
			}
			modes := importer.Modes(samples)
			ref, named, err := importer.Reference(modes, reference)
			if err != nil {
				return usagef("--reference: %v", err)
			}
			info.Reference, info.Cnperf, info.Window = ref, Version, window
			if err := importer.WriteRun(out, samples, info, stored); err != nil {
				return fail(err)
			}
			fmt.Fprintf(stdout, "imported %d rows of %s (%s) into %s: modes %s, reference %s",
				info.Imported, path, stored, out, strings.Join(modes, ", "), ref)
			if n := len(info.Skipped); n > 0 {
				fmt.Fprintf(stdout, "; %d rows skipped", n)
			}
			fmt.Fprintln(stdout)
			if !named {
				// Ratios against an arbitrary first tag (often the slowest
				// setup) read as nonsense: say so where the user looks.
				fmt.Fprintf(stdout, "no tag is named like a reference (%s): ratios compare with the first tag, %s; give --reference MODE to choose (cnperf report also takes --reference)\n",
					strings.Join(importer.ReferenceNames, ", "), ref)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "input format: ppbench (ppbench's CSV log) or ab (apachebench-derived CSV)")
	cmd.Flags().StringVarP(&out, "out", "o", "", "run directory to create (must not exist or be empty)")
	cmd.Flags().IntVar(&window, "receive-window", 0, "TCP receive window (bytes, 1024..2^30) the data was measured with, for the report's guides and small/big split (ppbench's default: 87380); omit it when unknown")
	cmd.Flags().StringVar(&reference, "reference", "", "reference mode for ratios (default: a tag named "+strings.Join(importer.ReferenceNames, ", ")+", in that order; else the first tag, and the output says so)")
	cmd.Flags().StringArrayVar(&series, "series", nil, "TAG=NAME: name the data's tag as a series (a preset's, to judge its claims: check --claims); repeatable")
	return cmd
}
