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

	"github.com/cnperf/cnperf/internal/container"
	"github.com/cnperf/cnperf/internal/engine"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/modes"
	"github.com/cnperf/cnperf/internal/netnsutil"
)

func newLabCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "lab", Short: "Build, list, enter and remove labs by hand"}
	var mode, hosts, driver string
	var port int
	up := &cobra.Command{
		Use:   "up NAME --mode MODE",
		Short: "Build a lab: hosts on an underlay switch plus the mode's devices",
		Example: `  cnperf lab up demo --mode overlay
  cnperf lab exec demo ping --container -- ip -br addr`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := lab.ValidName(args[0]); err != nil {
				return err
			}
			m, err := modes.Lookup(mode)
			if err != nil {
				return err
			}
			if port < 1 || port > 65535 {
				return usagef("--port %d: must be in 1..65535", port)
			}
			if driver != lab.DriverNetns && driver != lab.DriverDocker {
				return usagef("--driver %q: unknown (known: netns, docker)", driver)
			}
			if err := needNetAdmin(); err != nil {
				return err
			}
			cfg := lab.Config{Name: args[0], Mode: m, Hosts: strings.Split(hosts, ","), Port: port, Driver: driver}
			// The binary runs the image (docker) and overlay routers.
			if cfg.Exe, err = os.Executable(); err != nil {
				return fail(err)
			}
			if driver == lab.DriverDocker {
				if err := engine.Usable(cfg.Exe); err != nil {
					return fail(err)
				}
			}
			l, err := lab.Up(cfg)
			if err != nil {
				return fail(err)
			}
			fmt.Fprintf(stdout, "lab %s (%s, %s driver): %s\n", l.Name, l.Mode, l.Driver, m.Summary())
			for _, h := range l.Hosts {
				fmt.Fprintf(stdout, "  host %-6s netns %-28s eth0 %s\n", h.Name, h.NS, h.Addr)
			}
			for _, e := range l.Endpoints {
				fmt.Fprintf(stdout, "  endpoint on %-6s netns %-28s listen %s  external %s  internal %s\n", e.Host, e.NS, e.Listen, e.External, e.Internal)
				if e.Docker != nil {
					fmt.Fprintf(stdout, "    docker -H %s (engine %s), sandbox %.12s\n", e.Docker.DockerHost, e.Docker.Version, e.Docker.Sandbox)
				}
			}
			return nil
		},
	}
	up.Flags().StringVar(&mode, "mode", "bare", "network mode: "+strings.Join(modes.Names(), ", "))
	up.Flags().StringVar(&hosts, "hosts", "client,server1,server2", "comma-separated host names; the first is the client outside the cluster")
	up.Flags().IntVar(&port, "port", 8080, "port the servers' endpoints are published on")
	up.Flags().StringVar(&driver, "driver", lab.DriverNetns, "netns (devices by hand) or docker (a dockerd per host, Docker's own networks)")

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
			if err := needNetAdmin(); err != nil {
				return err
			}
			var errs []error
			for _, n := range args {
				if err := lab.Down(n); err != nil {
					errs = append(errs, err)
					continue
				}
				_, _ = container.CleanCgroups(n)
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
			labs, err := lab.List()
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
				fmt.Fprintf(stdout, "%-24s %-8s %s\n", l.Name, l.Mode, strings.Join(l.Namespaces, " "))
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
			if inContainer && !netnsutil.Exists(ns) {
				// A docker-driver lab: the container is the host's sandbox.
				if sb, err := engine.SandboxNetNS(args[0], args[1]); err == nil {
					ns = sb
				}
			}
			if !netnsutil.Exists(ns) {
				return usagef("no namespace %s: see `cnperf lab ls`", ns)
			}
			c := exec.Command(args[2], args[3:]...)
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
			if err := netnsutil.Do(ns, c.Run); err != nil {
				return fail(err)
			}
			return nil
		},
	}
	execCmd.Flags().BoolVar(&inContainer, "container", false, "enter the host's container namespace instead")
	cmd.AddCommand(up, down, ls, execCmd)
	return cmd
}

func newCleanCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "clean",
		Short: "Remove everything of cnperf's a killed run left: labs, their processes, cgroups and Docker engines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := needNetAdmin(); err != nil {
				return err
			}
			removed, err := lab.Clean()
			for _, n := range removed {
				fmt.Fprintf(stdout, "removed lab %s\n", n)
			}
			cgs, cerr := container.CleanCgroups("")
			for _, c := range cgs {
				fmt.Fprintf(stdout, "removed cgroup %s\n", c)
			}
			if len(removed) == 0 && len(cgs) == 0 && err == nil && cerr == nil {
				fmt.Fprintln(stdout, "nothing of cnperf's found")
			}
			return fail(errors.Join(err, cerr))
		},
	}
}
