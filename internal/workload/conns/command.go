package conns

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/rr"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/shell"
)

// ServeCommand is `cnperf serve conns`: rr's server on the port, the
// holder on the ports after it.
func ServeCommand(con workload.Console) *cobra.Command {
	maxConns := descriptors.ConnsMax
	return serverkit.Command{
		Use:   "conns [--listen ADDR]",
		Short: "Hold many TCP connections open beside an rr server, for `cnperf conns`",
		Long: fmt.Sprintf(`Answer rr transactions on the port (the probe) and hold TCP connections on
the %d ports after it, each an open file and nothing more, until their client
closes them; what they send is read and dropped.`, descriptors.ConnsHoldPorts),
		Port: descriptors.ConnsPort, ListenNote: fmt.Sprintf(" (the rr port; held connections on the %d after it)", descriptors.ConnsHoldPorts),
		Flags: func(f *pflag.FlagSet) {
			f.IntVar(&maxConns, "max-conns", maxConns, fmt.Sprintf("connections held at once, at most %d (and what the open files limit allows)", descriptors.ConnsMax))
		},
		Check: func(addr string) error {
			if maxConns < 1 || maxConns > descriptors.ConnsMax {
				return fmt.Errorf("--max-conns %d: must be in 1..%d", maxConns, descriptors.ConnsMax)
			}
			_, err := ServerPorts(addr)
			return err
		},
		Serve: func(ctx context.Context, addr string, _ int) error {
			host, _, _ := net.SplitHostPort(addr)
			port, _ := ServerPorts(addr)
			s, err := rr.Listen(addr)
			if err != nil {
				return err
			}
			h, err := ListenHold(host, port+1, descriptors.ConnsHoldPorts, maxConns)
			if err != nil {
				return err
			}
			fmt.Fprintf(con.Stderr, "cnperf serve conns: rr on %s, holding up to %d connections on ports %d-%d\n",
				s.Addr(), h.max, port+1, port+descriptors.ConnsHoldPorts)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			held := make(chan error, 1)
			go func() { held <- h.Serve(ctx, serverkit.Logger(con.Stderr, "cnperf conns: ")) }()
			err = s.Serve(ctx, con.Stderr)
			cancel()
			if herr := <-held; err == nil {
				err = herr
			}
			return err
		},
	}.Cobra(con)
}

// ServerPorts reads the rr port of a server's --listen address and checks
// that the holder's ports after it exist.
func ServerPorts(addr string) (int, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("--listen %q: want [HOST]:PORT", addr)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port+descriptors.ConnsHoldPorts > 65535 {
		return 0, fmt.Errorf("--listen %q: the port and the %d after it must be in 1..65535", addr, descriptors.ConnsHoldPorts)
	}
	return port, nil
}

// ClientCommand is `cnperf conns`.
func ClientCommand(con workload.Console) *cobra.Command {
	return shell.Command(con, shell.Client{
		Workload: descriptors.Conns,
		Short:    "Hold many TCP connections open and measure the round trip beside them, against `cnperf serve conns`",
		Long: `Open --connections TCP connections to the server's holding ports (at most
512 at a time, for at most 8 s), counting each outcome: established, refused,
timed out, reset, failed otherwise. Then, while they stay idle or --trickle a
byte each, measure rr's round trip for --time, and close them with a reset.
Refuses, in one line, a count this machine cannot hold (open files, source
ports, memory).`,
		Example: `  cnperf conns --server 198.18.0.2 -n 50000 -t 10s
  cnperf conns --server 198.18.0.2 -n 10000 --trickle 1s --json`,
		Time:     10 * time.Second,
		Interval: time.Second,
		Run: func(ctx context.Context, r shell.Run) error {
			p := r.Params
			cfg := Config{Addr: r.Server, Connections: int(p.Int("connections")), Trickle: p.Dur("trickle"),
				Timeout: p.Dur("timeout"), Duration: r.Time, Interval: r.Interval}
			r.Start()
			res, err := Run(ctx, cfg)
			if res.Workload == "" && err != nil {
				return err // refused before any connection
			}
			if r.JSON {
				_ = r.Env.Print(workload.KindEnd, res)
			} else {
				fmt.Fprintf(r.Stdout, "%d connections requested in %.1f s: %d established, %d refused, %d timed out, %d reset, %d failed; %d lost while held\n",
					res.Requested, res.OpenSeconds, res.Established, res.Refused, res.TimedOut, res.Reset, res.Failed, res.Lost)
				fmt.Fprintf(r.Stdout, "round trip beside them: p50 %.1f µs, p99 %.1f µs (%.0f trans/s)\n", res.RoundTrip.P50, res.RoundTrip.P99, res.TransPerSec)
			}
			return workload.Fail(err)
		},
	})
}
