package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/machine"
	"github.com/cnperf/cnperf/internal/record"
)

func newMachineCmd(cat lab.Catalog, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "machine",
		Short: "Profile this machine by Kratzke and Quint's (2015) seven features, and compare profiles by their similarity",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newMachineProfileCmd(cat, stdout, stderr), newMachineCompareCmd(stdout))
	return cmd
}

func newMachineProfileCmd(cat lab.Catalog, stdout, stderr io.Writer) *cobra.Command {
	o := machine.Options{Lab: cat, Repeat: 3, DiskBytes: machine.DefaultDiskBytes, NetworkTime: machine.DefaultNetworkTime, Out: stderr}
	var out string
	var noNetwork bool
	cmd := &cobra.Command{
		Use:   "profile -o FILE.json",
		Short: "Measure threads, processing time, memory size and bandwidth, disk read and write, and network transfer",
		Example: `  sudo cnperf machine profile -o this.json
  cnperf machine profile -o this.json --no-network --repeat 5 --dir /var/tmp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("-o FILE.json: where to write the profile")
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if err := record.CheckOutput(out); err != nil {
				return err
			}
			o.Network = !noNetwork
			if noNetwork {
				o.SkipReason = "--no-network"
			} else if err := namespace.NeedAdmin(); err != nil {
				o.Network, o.SkipReason = false, "not root: "+err.Error()
				fmt.Fprintf(stderr, "cnperf: network transfer skipped: %v\n", err)
			}
			exe, err := os.Executable()
			if err != nil {
				return fail(fmt.Errorf("find cnperf's own binary: %w", err))
			}
			o.Exe, o.Version = exe, Version
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			p, err := machine.Measure(ctx, o)
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("interrupted: %w", context.Canceled)
				}
				return fail(err)
			}
			if err := machine.Write(out, p); err != nil {
				return fail(err)
			}
			p.WriteText(stdout)
			fmt.Fprintf(stdout, "profile: %s\n", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "profile file to write (JSON)")
	f.StringVar(&o.Name, "name", "", "a name for the machine in tables (default: the file name)")
	f.IntVar(&o.Repeat, "repeat", o.Repeat, fmt.Sprintf("repetitions of each feature, the median kept (at most %d)", machine.MaxRepeat))
	f.StringVar(&o.Dir, "dir", "", "directory for the disk measurement's file, removed after (default: a new temporary directory)")
	f.Int64Var(&o.DiskBytes, "disk-size", o.DiskBytes, "the disk measurement's file size in bytes (written and read with direct I/O)")
	f.DurationVar(&o.NetworkTime, "net-time", o.NetworkTime, "each network repetition's measured time (a TCP stream across a bare lab)")
	f.BoolVar(&noNetwork, "no-network", false, "skip the network feature (it needs root to build a lab)")
	return cmd
}

func newMachineCompareCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare A.json B.json...",
		Short: "Print the similarity matrix of machine profiles (1: alike, towards 0: apart)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, err := machine.LoadAll(args)
			if err != nil {
				return err
			}
			mx := machine.Compare(ps)
			if asJSON {
				return mx.WriteJSON(stdout)
			}
			mx.WriteText(stdout)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the matrix as JSON")
	return cmd
}
