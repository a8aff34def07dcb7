package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/machine"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
)

// maxProfiles bounds the profiles one compare or report takes.
const maxProfiles = 64

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
			if o.Repeat < 1 || o.Repeat > machine.MaxRepeat {
				return usagef("--repeat %d: must be in 1..%d", o.Repeat, machine.MaxRepeat)
			}
			if o.DiskBytes < machine.MinDiskBytes || o.DiskBytes > machine.MaxDiskBytes {
				return usagef("--disk-size %d: must be in %d..%d bytes", o.DiskBytes, machine.MinDiskBytes, machine.MaxDiskBytes)
			}
			if o.NetworkTime <= 0 || o.NetworkTime > machine.MaxNetworkTime {
				return usagef("--net-time %s: must be in (0s, %s]", o.NetworkTime, machine.MaxNetworkTime)
			}
			if err := record.CheckOutput(out); err != nil {
				return err
			}
			o.Network = !noNetwork
			if noNetwork {
				o.SkipReason = "--no-network"
			} else if err := needNetAdmin(); err != nil {
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
			writeProfile(stdout, p)
			fmt.Fprintf(stdout, "profile: %s\n", out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "profile file to write (JSON)")
	f.StringVar(&o.Name, "name", "", "a name for the machine in tables (default: the file name)")
	f.IntVar(&o.Repeat, "repeat", o.Repeat, fmt.Sprintf("repetitions of each feature, the median kept (at most %d)", machine.MaxRepeat))
	f.StringVar(&o.Dir, "dir", "", "directory for the disk test's file, removed after (default: a new temporary directory)")
	f.Int64Var(&o.DiskBytes, "disk-size", o.DiskBytes, "the disk test's file size in bytes (written and read with direct I/O)")
	f.DurationVar(&o.NetworkTime, "net-time", o.NetworkTime, "each network repetition's measured time (a TCP stream across a bare lab)")
	f.BoolVar(&noNetwork, "no-network", false, "skip the network feature (it needs root to build a lab)")
	return cmd
}

// writeProfile prints a profile's features, one a line.
func writeProfile(w io.Writer, p machine.Profile) {
	for _, ft := range machine.Features {
		if v, ok := p.Features[ft.Key]; ok {
			fmt.Fprintf(w, "%-17s %14.6g %s\n", ft.Title, v, ft.Unit)
		} else {
			fmt.Fprintf(w, "%-17s %14s (%s)\n", ft.Title, "-", p.Skipped[ft.Key])
		}
	}
}

func newMachineCompareCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare A.json B.json...",
		Short: "Print the similarity matrix of machine profiles (1: alike, towards 0: apart)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, err := loadProfiles(args)
			if err != nil {
				return err
			}
			mx := machine.Compare(ps)
			if asJSON {
				b, err := json.MarshalIndent(struct {
					Names    []string     `json:"names"`
					Matrix   [][]*float64 `json:"similarity"`
					Features [][]int      `json:"features_compared"`
				}{mx.Names, mx.JSONValues(), mx.Features}, "", "  ")
				if err != nil {
					return fail(err)
				}
				_, err = fmt.Fprintf(stdout, "%s\n", b)
				return err
			}
			mx.WriteText(stdout)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the matrix as JSON")
	return cmd
}

// loadProfiles reads profile files; any bad one is bad input.
func loadProfiles(paths []string) ([]machine.Profile, error) {
	if len(paths) > maxProfiles {
		return nil, usagef("%d profiles, more than %d", len(paths), maxProfiles)
	}
	var ps []machine.Profile
	for _, p := range paths {
		prof, err := machine.Load(p)
		if err != nil {
			return nil, err
		}
		ps = append(ps, prof)
	}
	return ps, nil
}

// machineTable is the report's similarity matrix of the profiles given
// with --profiles.
func machineTable(paths string) (report.Table, error) {
	ps, err := loadProfiles(strings.Split(paths, ","))
	if err != nil {
		return report.Table{}, err
	}
	mx := machine.Compare(ps)
	t := report.Table{ID: "tab-machines", Title: "Machine similarity",
		Caption: "EasyCompare's similarity of the machine profiles given (cnperf machine profile): 1 − the mean over the features both have of (1 − min/max)²; 1 is alike.",
		Columns: append([]string{"profile", "machine", "profiled"}, mx.Names...)}
	for i, p := range ps {
		row := []report.Cell{{Text: p.Name}, {Text: fmt.Sprintf("%s, %d CPUs", p.Machine.CPUModel, p.Machine.CPUs)}, {Text: p.Created.Format(time.DateOnly)}}
		for _, v := range mx.Values[i] {
			row = append(row, report.Cell{Text: machine.Cell(v)})
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
