// Package cli is cnperf's command line: it parses arguments, maps them onto
// the other packages and turns their errors into one line and an exit code.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailure     = 1   // the run or command failed
	ExitUsage       = 2   // bad input: flags, spec, arguments
	ExitInterrupted = 130 // SIGINT/SIGTERM; what was measured is kept
)

// Version is set at build time with -ldflags "-X .../cli.Version=...".
var Version = "0.1.0-dev"

// runVersion is Version and, built from a git checkout, its commit
// (vcs.revision, "+dirty" when modified): a run, and the findings stored
// from it, name the code that measured.
func runVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 7:
			rev = s.Value[:7]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return Version
	}
	return Version + "+" + rev + dirty
}

// failure marks an error as a runtime failure (exit 1) rather than bad input.
type failure struct{ error }

func (f failure) Unwrap() error { return f.error }

func fail(err error) error {
	if err == nil {
		return nil
	}
	return failure{err}
}

// usagef makes a bad-input error (exit 2).
func usagef(format string, a ...any) error { return fmt.Errorf(format, a...) }

// Main runs cnperf with args and returns the exit code. cat is the lab's
// drivers and modes the binary links (internal/lab/drivers.Catalog).
func Main(cat lab.Catalog, args []string, stdout, stderr io.Writer) int {
	root := newRoot(cat, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Fprintf(stderr, "cnperf: %s\n", msg)
	var f failure
	var lf lab.Failure
	if code, ok := isVerdict(err); ok {
		return code
	}
	switch {
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &f), errors.As(err, &lf):
		return ExitFailure
	default:
		return ExitUsage
	}
}

func newRoot(cat lab.Catalog, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "cnperf",
		Short: "Measure what container networking costs, on real kernel datapaths",
		Long: `cnperf builds the network setups containers run on (bare hosts, host mode,
Docker's bridge with NAT, macvlan, VXLAN overlay) as real kernel topologies in
network namespaces, drives workloads through them side by side, and stores
every sample with the system's description.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddCommand(
		newRunCmd(cat, stdout, stderr),
		newPresetsCmd(stdout),
		newLabCmd(cat, stdout, stderr),
		newCleanCmd(cat, stdout),
		newServeCmd(stderr),
		newExportCmd(stdout),
		newSummaryCmd(stdout),
		newReportCmd(stdout, stderr),
		newCheckCmd(stdout),
		newImportCmd(stdout),
		newCalibrateCmd(stdout),
		newVersionCmd(stdout),
		newPauseCmd(),
		newStressCmd(),
		newMachineCmd(cat, stdout, stderr),
	)
	root.AddCommand(newClientCmds(stdout, stderr)...)
	if cat.Commands != nil {
		root.AddCommand(cat.Commands(Version, stdout, stderr)...)
	}
	return root
}
