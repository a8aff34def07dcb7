package rr

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/hdrtime"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/shell"
)

// ServeCommand is `cnperf serve rr`.
func ServeCommand(con workload.Console) *cobra.Command {
	return serverkit.Command{
		Use:   "rr [--listen ADDR]",
		Short: "Answer rr, udp rr and crr transactions, like netserver or sockperf server",
		Long: `Answer request/response transactions: TCP (rr and crr) and UDP on the same
port number; publish both.`,
		Port: descriptors.RRPort, ListenNote: " (the port: TCP and UDP)",
		Serve: func(ctx context.Context, addr string, _ int) error {
			s, err := Listen(addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(con.Stderr, "cnperf serve rr: listening on %s (tcp and udp)\n", s.Addr())
			return s.Serve(ctx, con.Stderr)
		},
	}.Cobra(con)
}

// ClientCommand is `cnperf rr`, the client, in the shell every socket
// workload's client runs in.
func ClientCommand(con workload.Console) *cobra.Command {
	return shell.Command(con, shell.Client{
		Workload: descriptors.RR,
		Short:    "Measure request/response transactions against `cnperf serve rr`, like netperf TCP_RR, UDP_RR, TCP_CRR",
		Long: `Measure request/response transactions: each worker sends a request and waits
for the whole response before the next (tcp: one connection per worker; udp: a
response not back within --timeout is counted as lost; crr: a new connection per
transaction). Prints transactions per second and the round trip's distribution;
one-way figures are the round trip / 2, as sockperf and netperf users report them.`,
		Example: `  cnperf rr --server 198.18.0.2 -t 10s
  cnperf rr --server 198.18.0.2 --protocol udp -r 64 -R 1024 -P 4 --json`,
		Time:     10 * time.Second,
		Interval: time.Second,
		Run: func(ctx context.Context, r shell.Run) error {
			p := r.Params
			cfg := Config{Addr: r.Server, Protocol: p.Text("protocol"), Duration: r.Time, Omit: p.Dur("omit"),
				Interval: r.Interval, RequestSize: int(p.Int("request")), ResponseSize: int(p.Int("response")),
				Parallel: int(p.Int("parallel")), Timeout: p.Dur("timeout"), BusyPoll: p.Bool("busy_poll")}
			if cfg.Interval == 0 {
				return fmt.Errorf("--interval 0s: must be >= 1ms")
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			// One P per worker and none idle: a spare P is woken for
			// nothing each time a worker yields (hot.go); the reporter
			// runs when a worker yields.
			runtime.GOMAXPROCS(cfg.Parallel)
			stdout := r.Stdout
			r.Start()
			if !r.JSON {
				fmt.Fprintf(stdout, "rr %s to %s: request %d B, response %d B, %d worker(s), %s", cfg.Protocol, cfg.Addr,
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
				if r.JSON {
					_ = r.Env.Print(workload.KindInterval, iv)
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
				if r.JSON {
					_ = r.Env.Print(workload.KindEnd, res)
				} else {
					printRRResult(stdout, res)
				}
			}
			return workload.Fail(err)
		},
	})
}

func printRRResult(w io.Writer, r Result) {
	fmt.Fprintln(w, "- - - - - - - - - - - - - - - - - - - - - - - - -")
	fmt.Fprintf(w, "%d transactions in %.2f s: %.0f trans/s (%s)", r.Transactions, r.Duration, r.TransPerSec, r.IO)
	if r.Protocol == ProtocolUDP {
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
	hdrtime.Table(w, 28, hdrtime.Row{Name: "round trip", Summary: hdrtime.Summary(r.RoundTrip)},
		hdrtime.Row{Name: "one way (round trip / 2)", Summary: hdrtime.Summary(r.OneWay)})
	if t := r.TCP; t != nil {
		fmt.Fprintf(w, "TCP_INFO of %d connection(s): %d retransmits (client), srtt mean %.0f µs (max %.0f, rttvar %.0f), cwnd mean %.1f (min %d)\n",
			t.Connections, t.Retransmits, t.RTTUS, t.RTTMaxUS, t.RTTVarUS, t.Cwnd, t.CwndMin)
	}
}
