package grid

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/redcon"

	"github.com/cnperf/cnperf/internal/workload"
)

// serveCommand is `cnperf serve grid`.
func serveCommand(con workload.Console) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "grid [--listen ADDR]",
		Short: "Run a storage member of an Olric data grid (partitioned map) for `cnperf grid`",
		Long: fmt.Sprintf(`Run one storage member of an Olric data grid, embedded in cnperf: a partitioned
map that clients of `+"`cnperf grid`"+` put into and remove from over the network. Gossip
(memberlist) listens on the next port, TCP and UDP, on the same address, encrypted
with a key the member draws at start: no other process can join its grid. With no
host or an unspecified one, the member binds and announces this namespace's first
global IPv4 address. Memory is bounded: requests beyond %d MiB are refused, maps
evict beyond %d keys or %d MB, and the member stops with an error if its heap
passes %d MB.`, redcon.MaxRequest>>20, maxKeys, maxInuse>>20, MaxMemory>>20),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addr, err := con.Listen(listen, DefaultPort)
			if err != nil {
				return err
			}
			// The member's own checks of --listen (ports, addresses it
			// can announce) are bad input too: exit 2, before it starts.
			if _, err := memberConfig(addr, nil, io.Discard); err != nil {
				return err
			}
			// A container's server is PID 1 of its pid namespace, where
			// signals without a handler are ignored: handle them.
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return workload.Fail(Serve(ctx, addr, con.Stderr))
		},
	}
	cmd.Flags().StringVar(&listen, "listen", con.DefaultListen(DefaultPort), con.ListenHelp+" (gossip: the next port)")
	return cmd
}

// clientCommand is `cnperf grid`, the client.
func clientCommand(con workload.Console) *cobra.Command {
	stdout := con.Stdout
	cfg := Config{}
	var jsonOut bool
	var join time.Duration
	cmd := &cobra.Command{
		Use:   "grid --server HOST[:PORT]",
		Short: "Put and remove in a data grid against `cnperf serve grid`, as the 2017 Coherence thesis's Coherence client",
		Long: `Join the data grid at --server as a client that stores nothing (every operation
crosses the network) and, for --time, remove the previous key and put a value of
--value-size characters under a new key, one operation at a time. Prints the
successful puts per interval and in total, failed operations, and the time of
each put and remove (HDR histogram).`,
		Example: `  cnperf grid --server 198.18.0.2 -t 5m
  cnperf grid --server 198.18.0.2:5204 --value-size 700 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Addr = withDefaultPort(cfg.Addr)
			if err := cfg.Validate(); err != nil {
				return err
			}
			if join <= 0 || join > MaxTimeout {
				return fmt.Errorf("--join-timeout %s: want more than 0s and at most %s", join, MaxTimeout)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runClient(ctx, cmd, cfg, join, jsonOut, stdout, con.Stderr)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&cfg.Addr, "server", "c", "", fmt.Sprintf("storage member: HOST[:PORT] (port %d by default)", DefaultPort))
	f.DurationVarP(&cfg.Duration, "time", "t", 10*time.Second, "how long the loop runs")
	f.DurationVarP(&cfg.Interval, "interval", "i", time.Second, "reporting interval")
	f.IntVar(&cfg.ValueSize, "value-size", DefaultValue, "characters of each value")
	f.DurationVar(&cfg.Timeout, "timeout", 0, fmt.Sprintf("bound on one operation (default %s)", DefaultTimeout))
	f.DurationVar(&join, "join-timeout", 10*time.Second, "how long to try joining the grid")
	f.BoolVar(&jsonOut, "json", false, "print every interval and the result as JSON lines")
	return cmd
}

// runClient joins the grid, runs the loop and prints what it measured.
func runClient(ctx context.Context, cmd *cobra.Command, cfg Config, join time.Duration, jsonOut bool, stdout, stderr io.Writer) error {
	op := cfg.Timeout
	if op == 0 {
		op = DefaultTimeout
	}
	store, closeFn, err := Dial(ctx, cfg.Addr, op, join, stderr)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w", context.Canceled)
		}
		return workload.Fail(err)
	}
	defer closeFn()
	env := workload.NewPrinter(stdout, name)
	if jsonOut {
		_ = env.Print(workload.KindStart, workload.StartOf(cmd, cfg.Addr))
	} else {
		fmt.Fprintf(stdout, "grid at %s: remove the previous key, put %d characters under a new one, for %s\n", cfg.Addr, cfg.ValueSize, cfg.Duration)
		fmt.Fprintf(stdout, "%-17s %10s %10s %12s %12s %8s\n", "interval (s)", "puts", "puts/s", "put p50 µs", "put p99 µs", "failed")
	}
	res, err := Run(ctx, cfg, store, func(iv Interval) {
		if jsonOut {
			_ = env.Print(workload.KindInterval, iv)
			return
		}
		fmt.Fprintf(stdout, "%7.2f-%-9.2f %10d %10.0f %12.1f %12.1f %8d\n", iv.Start, iv.End, iv.Puts, iv.PutsPerSec, iv.PutP50, iv.PutP99, iv.Failures)
	})
	if res.Duration > 0 {
		if jsonOut {
			_ = env.Print(workload.KindEnd, res)
		} else {
			printResult(stdout, res)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; printed what was measured: %w", context.Canceled)
		}
		return workload.Fail(err)
	}
	return nil
}

func printResult(w io.Writer, r Result) {
	fmt.Fprintln(w, "- - - - - - - - - - - - - - - - - - - - - - - - -")
	fmt.Fprintf(w, "%d puts in %.2f s: %.0f puts/s; failed: %d puts, %d removes\n", r.Puts, r.Duration, r.PutsPerSec, r.PutFailures, r.RemoveFailures)
	fmt.Fprintf(w, "%-8s %9s %9s %9s %9s %9s %9s %9s\n", "µs", "min", "mean", "p50", "p90", "p99", "p99.9", "max")
	for _, row := range []struct {
		name string
		l    Latency
	}{{"put", r.Put}, {"remove", r.Remove}} {
		l := row.l
		fmt.Fprintf(w, "%-8s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", row.name, l.Min, l.Mean, l.P50, l.P90, l.P99, l.P999, l.Max)
	}
}

// withDefaultPort adds the default port to a server address without one.
func withDefaultPort(addr string) string {
	if addr == "" {
		return addr
	}
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	if len(addr) > 1 && addr[0] == '[' && addr[len(addr)-1] == ']' { // [v6]
		addr = addr[1 : len(addr)-1]
	}
	return net.JoinHostPort(addr, strconv.Itoa(DefaultPort))
}
