package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/valyala/fasthttp"

	"github.com/cnperf/cnperf/internal/pingpong"
)

func newServeCmd(stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "serve", Short: "Run a workload server (ping, pong, stream, rr, udp)"}
	var listen, pongURL string
	var maxSize, retries int
	var timeout time.Duration
	serve := func(h func() (fasthttp.RequestHandler, error)) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			handler, err := h()
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fail(fmt.Errorf("listen on %s: %w", listen, err))
			}
			fmt.Fprintf(stderr, "cnperf %s: listening on %s\n", cmd.Name(), ln.Addr())
			// A container's server is PID 1 of its pid namespace, where
			// signals without a handler are ignored: handle them.
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return fail(pingpong.Serve(ctx, ln, handler))
		}
	}
	pong := &cobra.Command{
		Use:   "pong --listen ADDR",
		Short: "Answer GET /pong/{n} with an n-byte body, as Kratzke's original pong",
		Args:  cobra.NoArgs,
		RunE: serve(func() (fasthttp.RequestHandler, error) {
			if err := pingpong.CheckMaxSize(maxSize); err != nil {
				return nil, usagef("--max-size %v", err)
			}
			return pingpong.NewPongHandler(maxSize), nil
		}),
	}
	pong.Flags().StringVar(&listen, "listen", ":4040", "address to listen on")
	pong.Flags().IntVar(&maxSize, "max-size", pingpong.DefaultMaxSize, fmt.Sprintf("largest body served, at most %d; a larger request gets no answer (the connection closes)", pingpong.MaxSizeLimit))
	ping := &cobra.Command{
		Use:   "ping --pong URL --listen ADDR",
		Short: "Relay GET /ping/{n} to pong; time the relay for GET /mping/{n}",
		Args:  cobra.NoArgs,
		RunE: serve(func() (fasthttp.RequestHandler, error) {
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
			return h, nil
		}),
	}
	ping.Flags().StringVar(&listen, "listen", ":8080", "address to listen on")
	ping.Flags().StringVar(&pongURL, "pong", "http://localhost:4040", "base URL of the pong server")
	ping.Flags().IntVar(&retries, "retries", pingpong.DefaultRetries, fmt.Sprintf("retries after a failed attempt towards pong before giving up (0: none; at most %d)", pingpong.MaxRetries))
	ping.Flags().DurationVar(&timeout, "timeout", pingpong.DefaultTimeout, fmt.Sprintf("timeout of one attempt towards pong (at most %s)", pingpong.MaxTimeout))
	cmd.AddCommand(pong, ping, newServeStreamCmd(stderr), newServeRRCmd(stderr), newServeUDPCmd(stderr), newServeOverlayCmd(stderr))
	return cmd
}
