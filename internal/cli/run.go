package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/run"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/presets"
)

func newRunCmd(cat lab.Catalog, stdout, stderr io.Writer) *cobra.Command {
	var preset, out, modesFlag, driver string
	var duration time.Duration
	var labels []string
	var profileFlag bool
	var df []lab.Flag
	cmd := &cobra.Command{
		Use:   "run [SPEC.yaml] [--preset NAME]",
		Short: "Run an experiment from a spec file or a preset, all modes interleaved",
		Example: `  cnperf run --preset quick
  cnperf presets quick > my.yaml && cnperf run my.yaml --label machine=laptop`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var s spec.Spec
			var err error
			switch {
			case len(args) == 1 && preset != "":
				return usagef("give a spec file or --preset, not both")
			case len(args) == 1:
				s, err = spec.Load(args[0]) // its refusals name the file
			case preset != "":
				s, err = spec.Preset(preset)
			default:
				return usagef("give a spec file or --preset NAME (presets: %s)", strings.Join(presets.Names(), ", "))
			}
			if err != nil {
				return err
			}
			if modesFlag != "" {
				s.Modes = strings.Split(modesFlag, ",")
				if !slices.Contains(s.Modes, s.Reference) {
					s.Reference = s.Modes[0]
				}
			}
			if cmd.Flags().Changed("driver") {
				s.Driver, s.Drivers = driver, nil
			}
			flags, err := applyDriverFlags(cmd, df, &s, driver, stderr)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("duration") {
				if !s.Socket() {
					return usagef("--duration: only for socket tests (the spec has no tests)")
				}
				if duration <= 0 || duration > workload.MaxDuration {
					return usagef("--duration %s: must be in (0s, %s]", duration, workload.MaxDuration)
				}
				for i := range s.Tests {
					s.Tests[i].Duration = duration
				}
			}
			if profileFlag {
				s.Conditions.Profile = "on" // stored with the run's spec
			}
			for _, kv := range labels {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef("--label %q: want KEY=VALUE", kv)
				}
				if s.Labels == nil {
					s.Labels = map[string]string{}
				}
				s.Labels[k] = v
			}
			s.Claims = s.CoveredClaims()
			exe, err := os.Executable()
			if err != nil {
				return fail(fmt.Errorf("find cnperf's own binary: %w", err))
			}
			named := out != ""
			if !named {
				out = filepath.Join("runs", s.Name+"-"+time.Now().Format("20060102-150405"))
			}
			plan, err := run.NewPlan(run.Options{Spec: s, Dir: out, Exe: exe, Version: runVersion(), Out: stderr, Lab: cat, Flags: flags, Calibrate: analysis.Calibrated})
			if err != nil {
				// Bad input, refused before anything is built, named as
				// spec.Load names its own: the file (or preset) first.
				return fmt.Errorf("%s: %w", specSource(cmd, df, args, preset), err)
			}
			// A run never mixes its samples with another's: a directory
			// in the way is the user's to move, said before anything is built.
			if named {
				if err := record.CheckNewDir(out); err != nil {
					return usagef("-o: %v", err)
				}
			}
			// Each driver's own preflight: privileges, tools, a cluster
			// that answers. Nothing is made yet.
			if err := plan.Preflight(); err != nil {
				return err // a lab.Failure exits 1 (Main)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			res, err := plan.Run(ctx)
			if res != nil && res.Meta != nil {
				// The table comes from the stored run, as `cnperf summary` reads it.
				fmt.Fprintln(stdout)
				if serr := printSummary(stdout, stderr, res.Dir, "", false); serr != nil {
					fmt.Fprintf(stderr, "cnperf: summary: %v\n", serr)
				}
				fmt.Fprintf(stdout, "\nresults: %s (%d samples, %s)\n", res.Dir, res.Samples, res.Meta.Status)
			}
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("interrupted; the samples measured so far are kept: %w", context.Canceled)
				}
				return fail(err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&preset, "preset", "", "run an embedded preset (list them with: cnperf presets)")
	cmd.Flags().StringVarP(&out, "out", "o", "", "run directory to create (default runs/NAME-TIME)")
	cmd.Flags().StringVar(&modesFlag, "modes", "", "comma-separated modes, overriding the spec's")
	cmd.Flags().StringVar(&driver, "driver", "netns", "build the labs with: netns (by hand, in namespaces), docker (real Docker Engines, one per host) or kubernetes (pods on a cluster), overriding the spec's")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "KEY=VALUE stored with every sample (repeatable)")
	cmd.Flags().BoolVar(&profileFlag, "profile", false, "sample every CPU's stacks during each cell (the condition profile: on; a variant's own profile wins)")
	df = addDriverFlags(cmd, cat, true)
	cmd.Flags().DurationVar(&duration, "duration", 0, "socket tests: measure each test this long instead of the spec's durations (stored in the run's spec)")
	return cmd
}

// specSource names the spec run measures in its refusals: the file, or
// "preset NAME", as spec.Load and spec.Preset name them, and the flags
// that changed it ("quick.yaml with --modes"), since a field such as
// modes[1] may be the flag's.
func specSource(cmd *cobra.Command, driverFlags []lab.Flag, args []string, preset string) string {
	src := "preset " + preset
	if len(args) == 1 {
		src = args[0]
	}
	specFlags := []string{"modes", "driver"} // run's flags that change the spec it read
	for _, f := range driverFlags {
		specFlags = append(specFlags, f.Name)
	}
	var changed []string
	for _, f := range append(specFlags, "duration", "label") {
		if cmd.Flags().Changed(f) {
			changed = append(changed, "--"+f)
		}
	}
	if len(changed) > 0 {
		src += " with " + strings.Join(changed, ", ")
	}
	return src
}

func newPresetsCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "presets [NAME]",
		Short: "List the embedded presets, or print one as YAML to copy and edit",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				b, err := presets.Read(args[0])
				if err != nil {
					return err
				}
				_, err = stdout.Write(b)
				return err
			}
			for _, n := range presets.Names() {
				s, err := spec.Preset(n)
				if err != nil {
					return fail(err)
				}
				fmt.Fprintf(stdout, "%-17s %s\n", n, s.Description)
			}
			return nil
		},
	}
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print cnperf's version",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { fmt.Fprintf(stdout, "cnperf %s\n", runVersion()) },
	}
}

// addDriverFlags adds the drivers' flags to cmd (with run, also those
// only `cnperf run` takes) and returns them, each naming its driver.
func addDriverFlags(cmd *cobra.Command, cat lab.Catalog, run bool) []lab.Flag {
	var out []lab.Flag
	for _, d := range cat.Drivers {
		for _, f := range d.Flags() {
			switch {
			case f.RunOnly && !run:
				continue
			case f.List:
				cmd.Flags().StringSlice(f.Name, nil, f.Help)
			default:
				cmd.Flags().String(f.Name, "", f.Help)
			}
			f.Driver = d.Name()
			out = append(out, f)
		}
	}
	return out
}

// applyDriverFlags puts the driver flags given (or their environment
// variables, when --driver names their driver) into the spec, or into the
// options the drivers' Options read. A flag that selects its driver runs
// the spec on it; any other needs its driver named by the spec or --driver.
func applyDriverFlags(cmd *cobra.Command, fs []lab.Flag, s *spec.Spec, driver string, stderr io.Writer) (map[string]string, error) {
	flags := map[string]string{}
	driverGiven := cmd.Flags().Changed("driver")
	for _, f := range fs {
		v, _ := cmd.Flags().GetString(f.Name)
		if l, err := cmd.Flags().GetStringSlice(f.Name); err == nil {
			v = strings.Join(l, ",")
		}
		given := cmd.Flags().Changed(f.Name)
		if e := os.Getenv(f.Env); !given && f.Env != "" && e != "" && driverGiven && driver == f.Driver {
			v, given = e, true
			fmt.Fprintf(stderr, "cnperf: %s=%s: %s\n", f.Env, v, f.EnvSays)
		}
		switch {
		case !given || (f.Spec == nil && v == ""):
			continue
		case f.Spec != nil:
			f.Spec(s, v)
		default:
			flags[f.Name] = v
		}
		switch {
		case slices.Contains(s.RunDrivers(), f.Driver):
		case f.Selects:
			s.Driver, s.Drivers = f.Driver, nil
		case !driverGiven:
			var names []string
			for _, o := range fs {
				if o.Driver == f.Driver && !o.Selects {
					names = append(names, "--"+o.Name)
				}
			}
			return nil, usagef("%s are for the %s driver: add --driver %s", lab.JoinAnd(names), f.Driver, f.Driver)
		}
	}
	return flags, nil
}
