package grid

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tidwall/redcon"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/hdrtime"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/shell"
)

// ServeCommand is `cnperf serve grid`.
func ServeCommand(con workload.Console) *cobra.Command {
	return serverkit.Command{
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
		Port: descriptors.GridPort, ListenNote: " (gossip: the next port)",
		// The member's own checks of --listen (ports, addresses it can
		// announce) are bad input too: exit 2, before it starts.
		Check: func(addr string) error {
			_, err := memberConfig(addr, nil, io.Discard)
			return err
		},
		Serve: func(ctx context.Context, addr string, _ int) error { return Serve(ctx, addr, con.Stderr) },
	}.Cobra(con)
}

// ClientCommand is `cnperf grid`, the client, in the shell every socket
// workload's client runs in.
func ClientCommand(con workload.Console) *cobra.Command {
	var join time.Duration
	return shell.Command(con, shell.Client{
		Workload: descriptors.Grid,
		Short:    "Put and remove in a data grid against `cnperf serve grid`, as the 2017 Coherence thesis's Coherence client",
		Long: `Join the data grid at --server as a client that stores nothing (every operation
crosses the network) and, for --time, remove the previous key and put a value of
--value-size characters under a new key, one operation at a time. Prints the
successful puts per interval and in total, failed operations, and the time of
each put and remove (HDR histogram).`,
		Example: `  cnperf grid --server 198.18.0.2 -t 5m
  cnperf grid --server 198.18.0.2:5204 --value-size 700 --json`,
		Time:     10 * time.Second,
		TimeHelp: "how long the loop runs (a bare number is seconds)",
		Interval: time.Second,
		Flags: func(f *pflag.FlagSet) {
			f.DurationVar(&join, "join-timeout", 10*time.Second, "how long to try joining the grid")
		},
		Run: func(ctx context.Context, r shell.Run) error {
			cfg := Config{Addr: r.Server, Duration: r.Time, Interval: r.Interval, ValueSize: int(r.Params.Int("length")),
				Timeout: r.Params.Dur("timeout")}
			if err := cfg.Validate(); err != nil {
				return err
			}
			if join <= 0 || join > descriptors.GridMaxTimeout {
				return fmt.Errorf("--join-timeout %s: want more than 0s and at most %s", join, descriptors.GridMaxTimeout)
			}
			return runClient(ctx, r, cfg, join)
		},
	})
}

// runClient joins the grid, runs the loop and prints what it measured.
func runClient(ctx context.Context, r shell.Run, cfg Config, join time.Duration) error {
	stdout := r.Stdout
	op := cfg.Timeout
	op = cmp.Or(op, DefaultTimeout)
	store, closeFn, err := Dial(ctx, cfg.Addr, op, join, r.Stderr)
	if err != nil {
		return workload.Fail(err)
	}
	defer closeFn()
	r.Start()
	if !r.JSON {
		fmt.Fprintf(stdout, "grid at %s: remove the previous key, put %d characters under a new one, for %s\n", cfg.Addr, cfg.ValueSize, cfg.Duration)
		fmt.Fprintf(stdout, "%-17s %10s %10s %12s %12s %8s\n", "interval (s)", "puts", "puts/s", "put p50 µs", "put p99 µs", "failed")
	}
	res, err := Run(ctx, cfg, store, func(iv Interval) {
		if r.JSON {
			_ = r.Env.Print(workload.KindInterval, iv)
			return
		}
		fmt.Fprintf(stdout, "%7.2f-%-9.2f %10d %10.0f %12.1f %12.1f %8d\n", iv.Start, iv.End, iv.Puts, iv.PutsPerSec, iv.PutP50, iv.PutP99, iv.Failures)
	})
	if res.Duration > 0 {
		if r.JSON {
			_ = r.Env.Print(workload.KindEnd, res)
		} else {
			printResult(stdout, res)
		}
	}
	return workload.Fail(err)
}

func printResult(w io.Writer, r Result) {
	fmt.Fprintln(w, "- - - - - - - - - - - - - - - - - - - - - - - - -")
	fmt.Fprintf(w, "%d puts in %.2f s: %.0f puts/s; failed: %d puts, %d removes\n", r.Puts, r.Duration, r.PutsPerSec, r.PutFailures, r.RemoveFailures)
	hdrtime.Table(w, 8, hdrtime.Row{Name: "put", Summary: hdrtime.Summary(r.Put)}, hdrtime.Row{Name: "remove", Summary: hdrtime.Summary(r.Remove)})
}
