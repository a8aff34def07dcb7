package cli

import (
	"context"
	"errors"
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

// The docker driver's flag and name: --docker-host names an existing
// engine, which only that driver runs on (it decodes the flag itself).
const (
	dockerHostFlag = "docker-host"
	dockerDriver   = "docker"
	kubeDriver     = "kubernetes"
)

func newRunCmd(cat lab.Catalog, stdout, stderr io.Writer) *cobra.Command {
	var preset, out, modesFlag, driver, dockerHost string
	var kt spec.Kubernetes
	var duration time.Duration
	var labels []string
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
			// DOCKER_HOST picks the engine, as for the docker CLI, when the
			// docker driver is asked for without --docker-host.
			if env := os.Getenv("DOCKER_HOST"); env != "" && !cmd.Flags().Changed(dockerHostFlag) && driver == dockerDriver && cmd.Flags().Changed("driver") {
				dockerHost = env
				fmt.Fprintf(stderr, "cnperf: DOCKER_HOST=%s: running on that engine (unset it for emulated hosts, a dockerd each)\n", env)
			}
			flags := map[string]string{}
			if dockerHost != "" {
				flags[dockerHostFlag] = dockerHost
				if !slices.Contains(s.RunDrivers(), dockerDriver) {
					s.Driver, s.Drivers = dockerDriver, nil
				}
			}
			if err := applyKubeFlags(cmd, &s, kt); err != nil {
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
			exe, err := os.Executable()
			if err != nil {
				return fail(fmt.Errorf("find cnperf's own binary: %w", err))
			}
			named := out != ""
			if !named {
				out = filepath.Join("runs", s.Name+"-"+time.Now().Format("20060102-150405"))
			}
			plan, err := run.NewPlan(run.Options{Spec: s, Dir: out, Exe: exe, Version: Version, Out: stderr, Lab: cat, Flags: flags, Calibrate: analysis.Calibrated})
			if err != nil {
				// Bad input, refused before anything is built, named as
				// spec.Load names its own: the file (or preset) first.
				return fmt.Errorf("%s: %w", specSource(cmd, args, preset), err)
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
				var f lab.Failure
				if errors.As(err, &f) {
					return fail(err)
				}
				return err
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
	cmd.Flags().StringVar(&dockerHost, "docker-host", "", "run the docker driver on an existing engine, e.g. unix:///var/run/docker.sock, or tcp://HOST:2376 over TLS with $DOCKER_TLS_VERIFY and $DOCKER_CERT_PATH (single-host modes: bare, host, bridge); --driver docker takes $DOCKER_HOST too")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "KEY=VALUE stored with every sample (repeatable)")
	addKubeFlags(cmd, &kt)
	cmd.Flags().DurationVar(&duration, "duration", 0, "socket tests: measure each test this long instead of the spec's durations (stored in the run's spec)")
	return cmd
}

// specFlags are run's flags that change the spec it read.
var specFlags = []string{"modes", "driver", dockerHostFlag, "kubeconfig", "context", "image", "image-pull-policy", "nodes", "duration", "label"}

// specSource names the spec run measures in its refusals: the file, or
// "preset NAME", as spec.Load and spec.Preset name them, and the flags
// that changed it ("quick.yaml with --modes"), since a field such as
// modes[1] may be the flag's.
func specSource(cmd *cobra.Command, args []string, preset string) string {
	src := "preset " + preset
	if len(args) == 1 {
		src = args[0]
	}
	var changed []string
	for _, f := range specFlags {
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
		Run:   func(*cobra.Command, []string) { fmt.Fprintf(stdout, "cnperf %s\n", Version) },
	}
}

// addKubeFlags adds the kubernetes driver's flags, which override the
// spec's kubernetes: block.
func addKubeFlags(cmd *cobra.Command, kt *spec.Kubernetes) {
	f := cmd.Flags()
	f.StringVar(&kt.Kubeconfig, "kubeconfig", "", "kubernetes driver: the kubeconfig file (default $KUBECONFIG or ~/.kube/config; in a pod, in-cluster)")
	f.StringVar(&kt.Context, "context", "", "kubernetes driver: the kubeconfig context (default its current one)")
	f.StringVar(&kt.Image, "image", "", "kubernetes driver: the workload image, holding cnperf at /cnperf (cnperf image save writes one)")
	f.StringVar(&kt.PullPolicy, "image-pull-policy", "", "kubernetes driver: Always, IfNotPresent (default) or Never")
	f.StringSliceVar(&kt.Nodes, "nodes", nil, "kubernetes driver: comma-separated nodes to use (default: the Ready, schedulable, untainted ones)")
}

// applyKubeFlags puts the kubernetes flags given into the spec (so the run
// stores them); any of them asks for the kubernetes driver unless --driver
// says otherwise.
func applyKubeFlags(cmd *cobra.Command, s *spec.Spec, kt spec.Kubernetes) error {
	changed := false
	set := func(flag string, apply func(k *spec.Kubernetes)) {
		if cmd.Flags().Changed(flag) {
			if s.Kubernetes == nil {
				s.Kubernetes = &spec.Kubernetes{}
			}
			apply(s.Kubernetes)
			changed = true
		}
	}
	set("kubeconfig", func(k *spec.Kubernetes) { k.Kubeconfig = kt.Kubeconfig })
	set("context", func(k *spec.Kubernetes) { k.Context = kt.Context })
	set("image", func(k *spec.Kubernetes) { k.Image = kt.Image })
	set("image-pull-policy", func(k *spec.Kubernetes) { k.PullPolicy = kt.PullPolicy })
	set("nodes", func(k *spec.Kubernetes) { k.Nodes = kt.Nodes })
	if changed && !cmd.Flags().Changed("driver") && !slices.Contains(s.RunDrivers(), kubeDriver) {
		return usagef("--kubeconfig, --context, --image, --image-pull-policy and --nodes are for the kubernetes driver: add --driver kubernetes")
	}
	return nil
}
