package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab/delayline"
	"github.com/cnperf/cnperf/internal/lab/router"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/commands"
)

func newServeCmd(stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "serve",
		Long: `Run a workload server. Servers have no authentication: they listen on
loopback (127.0.0.1) unless --listen says otherwise, e.g. --listen :5201 for
every interface; open them only on a network you trust. cnperf run starts
them inside its labs with the lab's own addresses.`}
	// Every workload's servers, as package commands lists them: ping and
	// pong of ping-pong, then the socket workloads' (jitter and datagram
	// share `serve udp`, listed once).
	var names []string
	for _, srv := range commands.Servers(console(nil, stderr)) {
		names = append(names, srv.Name())
		cmd.AddCommand(adopt(srv))
	}
	cmd.Short = "Run a workload server (" + strings.Join(names, ", ") + ")"
	// The overlay-userspace and overlay-encrypted modes run a user-space
	// overlay router in each host; the netns driver runs the delay line in
	// a lab's switch namespace where the kernel has no netem.
	cmd.AddCommand(configCmd("overlay", "Run a host's user-space overlay router (udp over a TUN, or userspace WireGuard)",
		"the router's configuration, JSON (kind, tun, mtu, listen, private_key, peers)", false, router.ParseConfig,
		func(ctx context.Context, c router.Config) error {
			return router.Run(ctx, c, &router.Counters{}, func(f string, a ...any) { fmt.Fprintf(stderr, "cnperf "+f+"\n", a...) })
		}),
		configCmd("delayline", "Delay frames between a lab's two zones in user space",
			"the line's configuration, JSON (local, remote, delay_ns, jitter_ns, loss_percent, queue_bytes, stats, seed)", true, delayline.ParseConfig,
			func(ctx context.Context, c delayline.Config) error {
				return delayline.Serve(ctx, c, func(f string, a ...any) { fmt.Fprintf(stderr, "cnperf delayline: "+f+"\n", a...) })
			}))
	return cmd
}

// configCmd is `cnperf serve NAME --config JSON`, a process a lab starts
// with its configuration and ends with SIGTERM. As a container's process
// it is PID 1 of its pid namespace, where signals without a handler are
// ignored: it handles them.
func configCmd[C any](name, short, help string, hidden bool, parse func(string) (C, error), serve func(context.Context, C) error) *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:    name + " --config JSON",
		Short:  short,
		Args:   cobra.NoArgs,
		Hidden: hidden,
		RunE: func(*cobra.Command, []string) error {
			c, err := parse(config)
			if err != nil {
				return usagef("--config: %v", err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return fail(serve(ctx, c))
		},
	}
	cmd.Flags().StringVar(&config, "config", "", help)
	return cmd
}

// newClientCmds are the workloads' clients, `cnperf siege`, `cnperf
// stream` and the others, as package commands lists them.
func newClientCmds(stdout, stderr io.Writer) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range commands.Clients(console(stdout, stderr)) {
		out = append(out, adopt(c))
	}
	return out
}

// console is what a workload's commands get from the command line.
func console(stdout, stderr io.Writer) workload.Console {
	return workload.Console{Stdout: stdout, Stderr: stderr, Listen: listenAddr, DefaultListen: defaultListen, ListenHelp: listenHelp}
}

// adopt makes a workload's command exit as every command does: its
// workload.Failure is a failure (exit 1), other errors bad input.
func adopt(cmd *cobra.Command) *cobra.Command {
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		err := run(c, args)
		if errors.As(err, new(workload.Failure)) {
			return fail(err)
		}
		return err
	}
	return cmd
}
