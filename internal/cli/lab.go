package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

func newLabCmd(cat lab.Catalog, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "lab", Short: "Build, list, enter and remove labs by hand"}
	var mode, hosts, driver, family string
	var port int
	var df []lab.Flag
	up := &cobra.Command{
		Use:   "up NAME --mode MODE",
		Short: "Build a lab: hosts on an underlay switch plus the mode's devices",
		Example: `  cnperf lab up demo --mode overlay
  cnperf lab exec demo server1 --container -- ip -br addr`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := lab.ValidName(args[0]); err != nil {
				return err
			}
			m, err := cat.Mode(mode)
			if err != nil {
				return err
			}
			if port < 1 || port > 65535 {
				return usagef("--port %d: must be in 1..65535", port)
			}
			d, err := cat.Driver(driver)
			if err != nil {
				return usagef("--driver %q: unknown (known: %s)", driver, strings.Join(cat.DriverNames(), ", "))
			}
			if !d.Builds(m) {
				return usagef("--mode %s: the %s driver cannot build it", mode, d.Name())
			}
			switch family {
			case conditions.IPv4, conditions.IPv6, conditions.Dual:
			default:
				return usagef("--ip-family %q: use ipv4, ipv6 or dual", family)
			}
			if !lab.CarriesFamily(m, family) {
				return usagef("--ip-family %s: mode %s carries ipv4 only", family, mode)
			}
			cfg := lab.Config{Name: args[0], Mode: m, Topology: lab.ClientServers(strings.Split(hosts, ","), false), Port: port, Driver: driver}
			if family != conditions.IPv4 {
				cfg.Conditions.IPFamily = family
			}
			// The driver's options from its flags, as a spec holding them.
			s := spec.Spec{Driver: driver, Modes: []string{mode}}
			flags, err := applyDriverFlags(cmd, df, &s, driver, stderr)
			if err != nil {
				return err
			}
			if cfg.Options, err = d.Options(lab.OptionsInput{Spec: s, Flags: flags, Topology: cfg.Topology, Modes: cat.Modes, Warn: stderr}); err != nil {
				return err
			}
			// The binary runs the image (docker) and overlay routers.
			if cfg.Exe, err = os.Executable(); err != nil {
				return fail(err)
			}
			if err := d.Preflight(lab.PreflightInput{Spec: s, Options: cfg.Options, Exe: cfg.Exe}); err != nil {
				return err // a lab.Failure exits 1 (Main)
			}
			if err := lab.CheckNeeds(m); err != nil {
				return err // a lab.Failure exits 1 (Main)
			}
			l, err := cat.Up(cfg)
			if err != nil {
				return fail(err)
			}
			fmt.Fprintf(stdout, "lab %s (%s, %s driver): %s\n", l.Name, l.Mode, l.Driver, m.Summary())
			for _, h := range l.Hosts {
				fmt.Fprintf(stdout, "  host %-6s netns %-28s eth0 %s\n", h.Name, h.NS, strings.TrimSpace(h.Addr+" "+h.Addr6))
			}
			for _, e := range l.Endpoints {
				fmt.Fprintf(stdout, "  endpoint on %-6s netns %-28s listen %s  external %s  internal %s\n", e.Host, e.NS, e.Listen, e.External, e.Internal)
				for _, w := range e.Where() {
					fmt.Fprintf(stdout, "    %s\n", w)
				}
			}
			return nil
		},
	}
	up.Flags().StringVar(&mode, "mode", "bare", "network mode: "+strings.Join(cat.ModeNames(), ", "))
	up.Flags().StringVar(&hosts, "hosts", "client,server1,server2", "comma-separated host names; the first is the client outside the cluster")
	up.Flags().IntVar(&port, "port", 8080, "port the servers' endpoints are published on")
	up.Flags().StringVar(&family, "ip-family", conditions.IPv4, "address family: ipv4, ipv6 (2001:2::/48 only) or dual (both; workloads dial IPv6)")
	up.Flags().StringVar(&driver, "driver", "netns", "netns (devices by hand), docker (a dockerd per host, Docker's own networks) or kubernetes (pods on a cluster)")
	df = addDriverFlags(up, cat, false)

	down := &cobra.Command{
		Use:   "down NAME...",
		Short: "Remove labs (removing one that does not exist is fine)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, n := range args {
				if err := lab.ValidName(n); err != nil {
					return err
				}
			}
			if err := namespace.NeedAdmin(); err != nil {
				return err
			}
			var errs []error
			for _, n := range args {
				if err := cat.Down(n); err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(stdout, "removed lab %s\n", n)
			}
			return fail(errors.Join(errs...))
		},
	}

	var asJSON bool
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the labs on this machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			labs, err := cat.List()
			if err != nil {
				return fail(err)
			}
			if asJSON {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				if labs == nil {
					labs = []lab.Info{}
				}
				return enc.Encode(labs)
			}
			if len(labs) == 0 {
				fmt.Fprintln(stdout, "no labs")
				return nil
			}
			for _, l := range labs {
				fmt.Fprintf(stdout, "%-24s %-8s owner %-16s %s\n", l.Name, l.Mode, l.Owner.Describe(), strings.Join(l.Namespaces, " "))
			}
			return nil
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var inContainer bool
	execCmd := &cobra.Command{
		Use:   "exec NAME HOST [--container] -- COMMAND [ARG...]",
		Short: "Run a command inside a lab host's (or its container's) network namespace",
		Args:  cobra.MinimumNArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := lab.ValidName(args[0]); err != nil {
				return err
			}
			ns := lab.NS(args[0], args[1])
			if inContainer {
				ns = lab.ContainerNS(args[0], args[1])
			}
			if inContainer && !namespace.Exists(ns) {
				// A lab whose containers are a driver's (the docker
				// driver's sandboxes).
				for _, d := range cat.Drivers {
					if n, err := d.SandboxNS(args[0], args[1]); err == nil {
						ns = n
						break
					}
				}
			}
			if !namespace.Exists(ns) {
				return usagef("no namespace %s: see `cnperf lab ls`", ns)
			}
			c := exec.Command(args[2], args[3:]...)
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
			if err := namespace.Do(ns, c.Run); err != nil {
				return fail(err)
			}
			return nil
		},
	}
	execCmd.Flags().BoolVar(&inContainer, "container", false, "enter the host's container namespace instead")
	cmd.AddCommand(up, down, ls, execCmd)
	return cmd
}

func newCleanCmd(cat lab.Catalog, stdout io.Writer) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove what killed cnperf runs left: labs whose owner has exited, their processes, cgroups and Docker engines",
		Long: `Remove what killed cnperf runs left. Every lab carries its owner, the process
that built it: clean removes a lab only once that process has exited, so runs still
going keep their labs. Labs made by 'cnperf lab up' belong to nobody and stay until
'cnperf lab down NAME' or 'clean --all'. Namespaces, engines and cgroups that do not
carry cnperf's mark are never touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := namespace.NeedAdmin(); err != nil {
				return err
			}
			// Describe live owners before removing: --all ends their labs.
			res, err := cat.Clean(all)
			for _, l := range res.Removed {
				if all && !l.Owner.IsNone() && !l.Owner.Gone() {
					fmt.Fprintf(stdout, "removed lab %s, killing its processes; its owner %s is still running and will fail\n", l.Name, l.Owner.Describe())
					continue
				}
				fmt.Fprintf(stdout, "removed lab %s\n", l.Name)
			}
			for _, l := range res.Spared {
				switch {
				case l.Owner.IsNone() && l.OwnerText == "none":
					fmt.Fprintf(stdout, "left lab %s: made by 'cnperf lab up'; remove it with 'cnperf lab down %s' or 'cnperf clean --all'\n", l.Name, l.Name)
				case l.Owner.IsNone():
					fmt.Fprintf(stdout, "left lab %s: its engines record no owner; 'cnperf clean --all' removes it\n", l.Name)
				default:
					fmt.Fprintf(stdout, "left lab %s: its owner %s is running; 'cnperf clean --all' removes it\n", l.Name, l.Owner.Describe())
				}
			}
			if len(res.Removed) == 0 && len(res.Spared) == 0 && err == nil {
				fmt.Fprintln(stdout, "nothing of cnperf's found")
			}
			return fail(err)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also remove labs whose owner still runs and labs made by 'lab up' (their processes are killed)")
	return cmd
}
