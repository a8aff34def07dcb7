package server

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/valyala/fasthttp"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/shell"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// serveListening is a ping-pong server's serverkit.Command.Serve: serve on a TCP
// listener on the address, said on stderr.
func serveListening(con workload.Console, name string, serve func(context.Context, net.Listener) error) func(context.Context, string, int) error {
	return func(ctx context.Context, addr string, _ int) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
		fmt.Fprintf(con.Stderr, "cnperf %s: listening on %s\n", name, ln.Addr())
		return serve(ctx, ln)
	}
}

// PongCommand is `cnperf serve pong`.
func PongCommand(con workload.Console) *cobra.Command {
	var maxSize int
	return serverkit.Command{
		Use:   "pong --listen ADDR",
		Short: "Answer GET /pong/{n} with an n-byte body, as Kratzke's original pong",
		Port:  pingpong.DefaultPongPort,
		Flags: func(f *pflag.FlagSet) {
			size := pingpong.Param("max_body")
			size.Bounds[0].Min = 0 // pong may serve only empty bodies; a spec's max_body is at least 1
			shell.Flag(f, size, &maxSize)
		},
		Check: func(string) error {
			if err := pingpong.CheckMaxSize(maxSize); err != nil {
				return fmt.Errorf("--max-size %v", err)
			}
			return nil
		},
		Serve: serveListening(con, "pong", func(ctx context.Context, ln net.Listener) error { return ServePong(ctx, ln, maxSize) }),
	}.Cobra(con)
}

// PingCommand is `cnperf serve ping`.
func PingCommand(con workload.Console) *cobra.Command {
	var pongURL string
	var retries int
	var timeout time.Duration
	var answers tcpinfo.Book
	var h fasthttp.RequestHandler
	return serverkit.Command{
		Use:   "ping --pong URL --listen ADDR",
		Short: "Relay GET /ping/{n} to pong; time the relay for GET /mping/{n}",
		Port:  pingpong.DefaultPingPort,
		Flags: func(f *pflag.FlagSet) {
			f.StringVar(&pongURL, "pong", "http://127.0.0.1:4040", "base URL of the pong server")
			shell.Flag(f, pingpong.Param("retries"), &retries)
			shell.Flag(f, pingpong.Param("timeout"), &timeout)
		},
		// The handler is made before anything listens: its refusals are
		// bad input.
		Check: func(string) (err error) {
			if err := pingpong.Check("retries", retries); err != nil {
				return fmt.Errorf("--retries %v", err)
			}
			if err := pingpong.CheckTimeout(timeout); err != nil {
				return fmt.Errorf("--timeout %v", err)
			}
			if h, err = NewPingHandler(PingConfig{PongURL: pongURL, Retries: retries, Timeout: timeout, Answers: &answers}); err != nil {
				return fmt.Errorf("--pong: %v", err)
			}
			return nil
		},
		Serve: serveListening(con, "ping", func(ctx context.Context, ln net.Listener) error { return Serve(ctx, answers.Listener(ln), h) }),
	}.Cobra(con)
}
