package udp

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/shell"
)

// ServeCommand is `cnperf serve udp`: the listener of jitter and datagram.
func ServeCommand(con workload.Console) *cobra.Command {
	return serverkit.Command{
		Use:   "udp [--listen ADDR] [--tests N]",
		Short: "Listen for jitter and datagram tests (TCP control and UDP data on one port)",
		Long: `Listen for jitter and datagram tests, one at a time (--tests N: up to N at
once, each measured on its own; one more is told the listener is busy).`,
		Port: descriptors.UDPPort, ListenNote: " (the port: TCP and UDP)", Tests: true,
		Serve: func(ctx context.Context, addr string, tests int) error {
			ln, pc, err := serverkit.ListenPair(addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(con.Stderr, "cnperf serve udp: listening on %s (tcp and udp)\n", ln.Addr())
			s := &Server{Sessions: tests, Logf: serverkit.Logger(con.Stderr, "cnperf serve udp: ")}
			return s.Serve(ctx, pc, ln)
		},
	}.Cobra(con)
}

// JitterCommand is `cnperf jitter`, in the shell every socket workload's
// client runs in.
func JitterCommand(con workload.Console) *cobra.Command {
	return shell.Command(con, shell.Client{
		Workload: descriptors.Jitter,
		Short:    "Send UDP at a constant rate and report RFC 3550 jitter, loss and reordering, like iperf -u",
		Example: `  cnperf jitter --server 198.18.0.2 -b 10M -l 1470 -t 120s
  cnperf jitter --server 198.18.0.2:5203 --json`,
		Time:         DefaultDuration,
		TimeHelp:     "how long to send (a bare number is seconds)",
		Interval:     DefaultInterval,
		IntervalHelp: "reporting interval (0: total only)",
		Run: func(ctx context.Context, r shell.Run) error {
			rate, err := shell.ParseRate(r.Params.Text("rate"))
			if err != nil {
				return fmt.Errorf("--bitrate %v", err)
			}
			c := JitterConfig{Addr: r.Server, Rate: rate, Size: int(r.Params.Int("length")), Duration: r.Time, Interval: r.Interval}
			c.Size = cmp.Or(c.Size, DefaultJitterSize)
			if err := c.Validate(); err != nil {
				return err
			}
			if !r.JSON {
				fmt.Fprintf(r.Stdout, "cnperf jitter: %s of %d-byte datagrams to %s for %s\n",
					fmtBits(float64(c.Rate)), c.Size, c.Addr, c.Duration)
			}
			r.Start()
			res, err := RunJitter(ctx, c)
			if res.Total.Workload != "" {
				if r.JSON {
					printRecords(r.Env, res.Intervals, res.Total)
				} else {
					printJitter(r.Stdout, res)
				}
			}
			return workload.Fail(err)
		},
	})
}

// DatagramCommand is `cnperf datagram`, in the shell every socket
// workload's client runs in.
func DatagramCommand(con workload.Console) *cobra.Command {
	return shell.Command(con, shell.Client{
		Workload: descriptors.Datagram,
		Short:    "Publish fixed-size UDP packets and report loss and reordering, like Coherence's Datagram Test",
		Example: `  cnperf datagram --server 198.18.0.2 --count 2200000
  cnperf datagram --server 198.18.0.2 --size 1418 --rate 100M -t 60s --json`,
		TimeHelp:     "how long to send (0: until --count; 10s when neither is given)",
		Interval:     DefaultInterval,
		IntervalHelp: "reporting interval (0: total only)",
		Run: func(ctx context.Context, r shell.Run) error {
			rate, err := shell.ParseRate(r.Params.Text("rate"))
			if err != nil {
				return fmt.Errorf("--rate %v", err)
			}
			c := DatagramConfig{Addr: r.Server, Size: int(r.Params.Int("length")), Rate: rate, Count: r.Params.Int("count"),
				Duration: r.Time, Interval: r.Interval}
			if c.Count == 0 && c.Duration == 0 && !r.Cmd.Flags().Changed("time") {
				c.Duration = DefaultDuration
			}
			if err := c.Validate(); err != nil {
				return err
			}
			r.Start()
			res, err := RunDatagram(ctx, c)
			if res.Total.Workload != "" {
				if r.JSON {
					printRecords(r.Env, res.Intervals, res.Total)
				} else {
					printDatagram(r.Stdout, c.Addr, res)
				}
			}
			return workload.Fail(err)
		},
	})
}

// printRecords prints a test's records as envelope lines: the listener
// reports them at the end.
func printRecords[T any](env *workload.Printer, intervals []T, total T) {
	for _, iv := range intervals {
		_ = env.Print(workload.KindInterval, iv)
	}
	_ = env.Print(workload.KindEnd, total)
}

func fmtBits(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.2f Gbits/sec", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.2f Mbits/sec", bps/1e6)
	default:
		return fmt.Sprintf("%.2f Kbits/sec", bps/1e3)
	}
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GBytes", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MBytes", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.2f KBytes", float64(n)/(1<<10))
	}
}

// printJitter prints iperf3's UDP table as its receiver would.
func printJitter(w io.Writer, r JitterResult) {
	fmt.Fprintf(w, "%-17s %-13s %-15s %-10s %-20s %s\n", "Interval", "Transfer", "Bitrate", "Jitter", "Lost/Total", "Out of order")
	line := func(x JitterRecord, tag string) {
		fmt.Fprintf(w, "%6.2f-%-6.2f sec  %-13s %-15s %-10s %-20s %d%s\n", x.StartS, x.EndS, fmtBytes(x.Bytes), fmtBits(x.BPS),
			fmt.Sprintf("%.3f ms", x.JitterMS), fmt.Sprintf("%d/%d (%.2g%%)", x.Lost, x.Lost+x.Packets, x.LossPct), x.OutOfOrder, tag)
	}
	for _, x := range r.Intervals {
		line(x, "")
	}
	fmt.Fprintln(w, "- - - - - - - - - - - - - - - - - - - - - - - - -")
	line(r.Total, "  total")
	if t := r.Total; t.Duplicates > 0 || t.Invalid > 0 {
		fmt.Fprintf(w, "%d duplicate and %d invalid datagrams ignored\n", t.Duplicates, t.Invalid)
	}
}

// printDatagram prints one row per interval, then the total as Coherence's
// listener prints its lifetime report.
func printDatagram(w io.Writer, server string, r DatagramResult) {
	if len(r.Intervals) > 0 {
		fmt.Fprintf(w, "%9s %8s %10s %12s %10s %9s %9s %12s %10s\n",
			"Elapsed", "Size", "MB/s", "packets/s", "Received", "Missing", "Success", "Out of order", "Avg offset")
		for _, x := range r.Intervals {
			fmt.Fprintf(w, "%7.0fms %8d %10.2f %12.0f %10d %9d %9.5f %12d %10.1f\n",
				(x.StartS+x.ElapsedS)*1000, x.PacketSize, x.MBPerS, x.PacketsPerS, x.Received, x.Missing, x.SuccessRate, x.OutOfOrder, x.AvgOffset)
		}
		fmt.Fprintln(w)
	}
	t := r.Total
	fmt.Fprintf(w, "Lifetime, to %s:\n", server)
	fmt.Fprintf(w, "%20s %.0fms\n", "elapsed:", t.ElapsedS*1000)
	fmt.Fprintf(w, "%20s %d\n", "packet size:", t.PacketSize)
	fmt.Fprintf(w, "%20s %.2f MB/sec\n", "throughput:", t.MBPerS)
	fmt.Fprintf(w, "%20s %.0f packets/sec\n", "", t.PacketsPerS)
	fmt.Fprintf(w, "%20s %d of %d\n", "received:", t.Received, t.Received+t.Missing)
	fmt.Fprintf(w, "%20s %d\n", "missing:", t.Missing)
	fmt.Fprintf(w, "%20s %.7f\n", "success rate:", t.SuccessRate)
	fmt.Fprintf(w, "%20s %d\n", "out of order:", t.OutOfOrder)
	fmt.Fprintf(w, "%20s %.1f\n", "avg offset:", t.AvgOffset)
	if t.Duplicates > 0 || t.Invalid > 0 {
		fmt.Fprintf(w, "%20s %d duplicate, %d invalid\n", "ignored:", t.Duplicates, t.Invalid)
	}
}
