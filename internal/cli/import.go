package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/importer"
)

// maxImportProblems caps the skipped rows listed on stderr; the count is
// always complete.
const maxImportProblems = 20

// The TCP receive windows --receive-window accepts, in bytes: a window is
// at most 2^30 bytes (RFC 7323's largest scale); below 1 KiB no guide or
// split at its multiples means anything.
const (
	minReceiveWindow = 1 << 10
	maxReceiveWindow = 1 << 30
)

func newImportCmd(stdout io.Writer) *cobra.Command {
	var format, out, reference string
	var window int
	cmd := &cobra.Command{
		Use:   "import --format ppbench|ab FILE -o DIR",
		Short: "Turn a ppbench or apachebench CSV file into a run directory that summary, export and report read",
		Example: `  cnperf import --format ppbench m3.large.csv -o runs/kratzke-m3
  cnperf import --format ab ab-results.csv -o runs/ab --reference bare`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var read func(io.Reader, string) ([]record.Sample, importer.Info, error)
			switch format {
			case "ppbench":
				read = importer.PPBench
			case "ab", "apachebench":
				format, read = "apachebench", importer.ApacheBench
			default:
				return usagef("--format %q: want ppbench or ab", format)
			}
			if out == "" {
				return usagef("give the run directory to create with -o DIR")
			}
			if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
				return usagef("-o %s: directory is not empty", out)
			}
			if cmd.Flags().Changed("receive-window") && (window < minReceiveWindow || window > maxReceiveWindow) {
				return usagef("--receive-window %d: must be in %d..%d bytes (omit it when unknown)", window, minReceiveWindow, maxReceiveWindow)
			}
			path := args[0]
			f, err := record.OpenFile(path, importer.MaxFileBytes)
			if err != nil {
				return usagef("%v", err)
			}
			defer f.Close()
			samples, info, err := read(io.LimitReader(f, importer.MaxFileBytes), path)
			warn := cmd.ErrOrStderr()
			for i, s := range info.Skipped {
				if i == maxImportProblems {
					fmt.Fprintf(warn, "cnperf: %s: further skipped rows not listed\n", path)
					break
				}
				fmt.Fprintf(warn, "cnperf: %s:%d: %s: skipped\n", path, s.Line, s.Reason)
			}
			for _, n := range info.Notes {
				fmt.Fprintf(warn, "cnperf: %s: %s\n", path, n)
			}
			if err != nil {
				return err // bad input: no header, missing column, no usable row
			}
			modes := importer.Modes(samples)
			ref, named, err := importer.Reference(modes, reference)
			if err != nil {
				return usagef("--reference: %v", err)
			}
			info.Reference, info.Cnperf, info.Window = ref, Version, window
			if err := importer.WriteRun(out, samples, info, format); err != nil {
				return fail(err)
			}
			fmt.Fprintf(stdout, "imported %d rows of %s (%s) into %s: modes %s, reference %s",
				info.Imported, path, format, out, strings.Join(modes, ", "), ref)
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
	return cmd
}
