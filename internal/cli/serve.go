package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/commands"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

func newServeCmd(stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "serve", Short: "Run a workload server (ping, pong, stream, rr, udp)",
		Long: `Run a workload server. Servers have no authentication: they listen on
loopback (127.0.0.1) unless --listen says otherwise, e.g. --listen :5201 for
every interface; open them only on a network you trust. cnperf run starts
them inside its labs with the lab's own addresses.`}
	var listen, pongURL string
	var maxSize, retries int
	var timeout time.Duration
	// serve runs the server srv returns (or its error) on --listen.
	serve := func(srv func() (func(context.Context, net.Listener) error, error)) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			addr, err := listenAddr(listen, defaultPort(cmd))
			if err != nil {
				return err
			}
			run, err := srv()
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fail(fmt.Errorf("listen on %s: %w", addr, err))
			}
			fmt.Fprintf(stderr, "cnperf %s: listening on %s\n", cmd.Name(), ln.Addr())
			// A container's server is PID 1 of its pid namespace, where
			// signals without a handler are ignored: handle them.
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return fail(run(ctx, ln))
		}
	}
	pong := &cobra.Command{
		Use:   "pong --listen ADDR",
		Short: "Answer GET /pong/{n} with an n-byte body, as Kratzke's original pong",
		Args:  cobra.NoArgs,
		RunE: serve(func() (func(context.Context, net.Listener) error, error) {
			if err := pingpong.CheckMaxSize(maxSize); err != nil {
				return nil, usagef("--max-size %v", err)
			}
			return func(ctx context.Context, ln net.Listener) error { return pingpong.ServePong(ctx, ln, maxSize) }, nil
		}),
	}
	pong.Flags().StringVar(&listen, "listen", defaultListen(4040), listenHelp)
	pong.Flags().IntVar(&maxSize, "max-size", pingpong.DefaultMaxSize, fmt.Sprintf("largest body served, at most %d; a larger request gets no answer (the connection closes)", pingpong.MaxSizeLimit))
	ping := &cobra.Command{
		Use:   "ping --pong URL --listen ADDR",
		Short: "Relay GET /ping/{n} to pong; time the relay for GET /mping/{n}",
		Args:  cobra.NoArgs,
		RunE: serve(func() (func(context.Context, net.Listener) error, error) {
			if err := pingpong.CheckRetries(retries); err != nil {
				return nil, usagef("--retries %v", err)
			}
			if err := pingpong.CheckTimeout(timeout); err != nil {
				return nil, usagef("--timeout %v", err)
			}
			h, err := pingpong.NewPingHandler(pingpong.PingConfig{PongURL: pongURL, Retries: retries, Timeout: timeout})
			if err != nil {
				return nil, usagef("--pong: %v", err)
			}
			return func(ctx context.Context, ln net.Listener) error { return pingpong.Serve(ctx, ln, h) }, nil
		}),
	}
	ping.Flags().StringVar(&listen, "listen", defaultListen(8080), listenHelp)
	ping.Flags().StringVar(&pongURL, "pong", "http://127.0.0.1:4040", "base URL of the pong server")
	ping.Flags().IntVar(&retries, "retries", pingpong.DefaultRetries, fmt.Sprintf("retries after a failed attempt towards pong before giving up (0: none; at most %d)", pingpong.MaxRetries))
	ping.Flags().DurationVar(&timeout, "timeout", pingpong.DefaultTimeout, fmt.Sprintf("timeout of one attempt towards pong (at most %s)", pingpong.MaxTimeout))
	cmd.AddCommand(pong, ping, newServeOverlayCmd(stderr), newServeDelaylineCmd(stderr))
	for _, srv := range commands.Servers(console(nil, stderr)) {
		cmd.AddCommand(adopt(srv))
	}
	return cmd
}

// newClientCmds are the socket workloads' clients, `cnperf stream` and
// the others, as package commands lists them.
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
