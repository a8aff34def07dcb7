package server

import (
	"context"
	"fmt"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/shell"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
)

// serveRunE runs the server srv returns (or its error, bad input) on
// --listen, until SIGINT or SIGTERM.
func serveRunE(con workload.Console, listen *string, port int, srv func() (func(context.Context, net.Listener) error, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		addr, err := con.Listen(*listen, port)
		if err != nil {
			return err
		}
		run, err := srv()
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return workload.Fail(fmt.Errorf("listen on %s: %w", addr, err))
		}
		fmt.Fprintf(con.Stderr, "cnperf %s: listening on %s\n", cmd.Name(), ln.Addr())
		// A container's server is PID 1 of its pid namespace, where
		// signals without a handler are ignored: handle them.
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return workload.Fail(run(ctx, ln))
	}
}

// PongCommand is `cnperf serve pong`.
func PongCommand(con workload.Console) *cobra.Command {
	var listen string
	var maxSize int
	cmd := &cobra.Command{
		Use:   "pong --listen ADDR",
		Short: "Answer GET /pong/{n} with an n-byte body, as Kratzke's original pong",
		Args:  cobra.NoArgs,
		RunE: serveRunE(con, &listen, pingpong.DefaultPongPort, func() (func(context.Context, net.Listener) error, error) {
			if err := pingpong.CheckMaxSize(maxSize); err != nil {
				return nil, fmt.Errorf("--max-size %v", err)
			}
			return func(ctx context.Context, ln net.Listener) error { return ServePong(ctx, ln, maxSize) }, nil
		}),
	}
	cmd.Flags().StringVar(&listen, "listen", con.DefaultListen(pingpong.DefaultPongPort), con.ListenHelp)
	size := pingpong.Param("max_body")
	size.Bounds[0].Min = 0 // pong may serve only empty bodies; a spec's max_body is at least 1
	shell.Flag(cmd.Flags(), size, &maxSize)
	return cmd
}

// PingCommand is `cnperf serve ping`.
func PingCommand(con workload.Console) *cobra.Command {
	var listen, pongURL string
	var retries int
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "ping --pong URL --listen ADDR",
		Short: "Relay GET /ping/{n} to pong; time the relay for GET /mping/{n}",
		Args:  cobra.NoArgs,
		RunE: serveRunE(con, &listen, pingpong.DefaultPingPort, func() (func(context.Context, net.Listener) error, error) {
			if err := pingpong.Check("retries", retries); err != nil {
				return nil, fmt.Errorf("--retries %v", err)
			}
			if err := pingpong.CheckTimeout(timeout); err != nil {
				return nil, fmt.Errorf("--timeout %v", err)
			}
			var answers tcpinfo.Book
			h, err := NewPingHandler(PingConfig{PongURL: pongURL, Retries: retries, Timeout: timeout, Answers: &answers})
			if err != nil {
				return nil, fmt.Errorf("--pong: %v", err)
			}
			return func(ctx context.Context, ln net.Listener) error { return Serve(ctx, answers.Listener(ln), h) }, nil
		}),
	}
	cmd.Flags().StringVar(&listen, "listen", con.DefaultListen(pingpong.DefaultPingPort), con.ListenHelp)
	cmd.Flags().StringVar(&pongURL, "pong", "http://127.0.0.1:4040", "base URL of the pong server")
	shell.Flag(cmd.Flags(), pingpong.Param("retries"), &retries)
	shell.Flag(cmd.Flags(), pingpong.Param("timeout"), &timeout)
	return cmd
}
