package rr

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
)

// serveCommand is `cnperf serve rr`.
func serveCommand(con workload.Console) *cobra.Command {
	stderr := con.Stderr
	var listen string
	cmd := &cobra.Command{
		Use:   "rr [--listen ADDR]",
		Short: "Answer rr, udp rr and crr transactions, like netserver or sockperf server",
		Long: `Answer request/response transactions: TCP (rr and crr) and UDP on the same
port number; publish both.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, _ := strconv.Atoi(DefaultPort)
			addr, err := con.Listen(listen, p)
			if err != nil {
				return err
			}
			s, err := Listen(addr)
			if err != nil {
				return workload.Fail(err)
			}
			fmt.Fprintf(stderr, "cnperf serve rr: listening on %s (tcp and udp)\n", s.Addr())
			// A container's server is PID 1 of its pid namespace, where
			// signals without a handler are ignored: handle them.
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return workload.Fail(s.Serve(ctx, stderr))
		},
	}
	p, _ := strconv.Atoi(DefaultPort)
	cmd.Flags().StringVar(&listen, "listen", con.DefaultListen(p), con.ListenHelp+" (the port: TCP and UDP)")
	return cmd
}

// clientCommand is `cnperf rr`, the client.
func clientCommand(con workload.Console) *cobra.Command {
	stdout := con.Stdout
	var cfg Config
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "rr --server HOST[:PORT]",
		Short: "Measure request/response transactions against `cnperf serve rr`, like netperf TCP_RR, UDP_RR, TCP_CRR",
		Long: `Measure request/response transactions: each worker sends a request and waits
for the whole response before the next (tcp: one connection per worker; udp: a
response not back within --timeout is counted as lost; crr: a new connection per
transaction). Prints transactions per second and the round trip's distribution;
one-way figures are the round trip / 2, as sockperf and netperf users report them.`,
		Example: `  cnperf rr --server 198.18.0.2 -t 10s
  cnperf rr --server 198.18.0.2 --mode udp -r 64 -R 1024 -P 4 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Addr = WithDefaultPort(cfg.Addr)
			// The library reads 0 as "default"; on the command line it was typed.
			for _, c := range []struct {
				name string
				v    int
			}{{"--request", cfg.RequestSize}, {"--response", cfg.ResponseSize}, {"--parallel", cfg.Parallel}} {
				if c.v == 0 {
					return fmt.Errorf("%s 0: must be >= 1", c.name)
				}
			}
			if cfg.Interval == 0 {
				return fmt.Errorf("--interval 0s: must be >= 1ms")
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("%v", err)
			}
			// One P per worker and none idle: a spare P is woken for
			// nothing each time a worker yields (hot.go); the reporter
			// runs when a worker yields.
			runtime.GOMAXPROCS(cfg.Parallel)
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			env := workload.NewPrinter(stdout, "rr")
			if jsonOut {
				_ = env.Print(workload.KindStart, workload.StartOf(cmd, cfg.Addr))
			} else {
				fmt.Fprintf(stdout, "rr %s to %s: request %d B, response %d B, %d worker(s), %s", cfg.Mode, cfg.Addr,
					cfg.RequestSize, cfg.ResponseSize, cfg.Parallel, cfg.Duration)
				if cfg.BusyPoll {
					fmt.Fprint(stdout, ", busy polling")
				}
				if cfg.Omit > 0 {
					fmt.Fprintf(stdout, " after %s warm-up", cfg.Omit)
				}
				fmt.Fprintln(stdout)
				fmt.Fprintf(stdout, "%-17s %12s %12s %12s%s\n", "interval (s)", "trans", "trans/s", "rtt p50 µs", "   rtt p99 µs")
			}
			res, err := Run(ctx, cfg, func(iv Interval) {
				if jsonOut {
					_ = env.Print(workload.KindInterval, iv)
					return
				}
				line := fmt.Sprintf("%7.2f-%-9.2f %12d %12.0f %12.1f %12.1f", iv.Start, iv.End, iv.Transactions, iv.TransPerSec, iv.P50, iv.P99)
				if iv.Lost > 0 {
					line += fmt.Sprintf("  lost %d", iv.Lost)
				}
				if iv.Omitted {
					line += "  (omitted)"
				}
				fmt.Fprintln(stdout, line)
			})
			if res.Duration > 0 {
				if jsonOut {
					_ = env.Print(workload.KindEnd, res)
				} else {
					printRRResult(stdout, res)
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("interrupted; printed what was measured: %w", context.Canceled)
				}
				return workload.Fail(err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&cfg.Addr, "server", "c", "", "server to measure against: HOST[:PORT] (port "+DefaultPort+" by default)")
	f.StringVar(&cfg.Mode, "mode", ModeTCP, "tcp (TCP_RR), udp (UDP_RR) or crr (TCP_CRR: connect, request, response, close)")
	f.DurationVarP(&cfg.Duration, "time", "t", 10*time.Second, "measured time")
	f.DurationVar(&cfg.Omit, "omit", 0, "warm-up before the measured time, left out of the summary")
	f.IntVarP(&cfg.RequestSize, "request", "r", 1, "request size in bytes")
	f.IntVarP(&cfg.ResponseSize, "response", "R", 1, "response size in bytes")
	f.IntVarP(&cfg.Parallel, "parallel", "P", 1, "workers, one connection each")
	f.DurationVarP(&cfg.Interval, "interval", "i", time.Second, "reporting interval")
	f.DurationVar(&cfg.Timeout, "timeout", 0, "udp: a response later than this is lost (default 1s); tcp, crr: bound on connecting and on a crr transaction (default 10s)")
	f.BoolVar(&cfg.BusyPoll, "busy-poll", false, "spin on non-blocking calls instead of blocking, as sockperf --nonblocked: the CPU never idles (a CPU per worker; refused on a one-CPU machine)")
	f.BoolVar(&jsonOut, "json", false, "print every interval and the result as JSON lines")
	return cmd
}

func printRRResult(w io.Writer, r Result) {
	fmt.Fprintln(w, "- - - - - - - - - - - - - - - - - - - - - - - - -")
	fmt.Fprintf(w, "%d transactions in %.2f s: %.0f trans/s (%s)", r.Transactions, r.Duration, r.TransPerSec, r.IO)
	if r.Mode == ModeUDP {
		pct := 0.0
		if n := r.Transactions + r.Lost; n > 0 {
			pct = 100 * float64(r.Lost) / float64(n)
		}
		fmt.Fprintf(w, ", lost %d (%.3g%%)", r.Lost, pct)
	}
	fmt.Fprintln(w)
	if r.Transactions == 0 {
		return
	}
	fmt.Fprintf(w, "%-28s %9s %9s %9s %9s %9s %9s %9s\n", "µs", "min", "mean", "p50", "p90", "p99", "p99.9", "max")
	for _, row := range []struct {
		name string
		l    Latency
	}{{"round trip", r.RoundTrip}, {"one way (round trip / 2)", r.OneWay}} {
		l := row.l
		fmt.Fprintf(w, "%-28s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", row.name, l.Min, l.Mean, l.P50, l.P90, l.P99, l.P999, l.Max)
	}
}
