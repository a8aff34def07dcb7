package stream

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/shell"
)

// ServeCommand is `cnperf serve stream`.
func ServeCommand(con workload.Console) *cobra.Command {
	return serverkit.Command{
		Use:   "stream [--listen ADDR] [--tests N]",
		Short: "Receive stream tests: TCP and UDP bulk throughput, like iperf3 -s",
		Long: `Receive stream tests, one at a time (--tests N: up to N at once, each
measured on its own; one more is told the server is busy). Control and TCP
data use the TCP port, UDP data the UDP port of the same number: publish both.`,
		Port: descriptors.StreamPort, ListenNote: " (the port: TCP and UDP)", Tests: true, TestsNote: " (1: as iperf3 -s)",
		Serve: func(ctx context.Context, addr string, tests int) error {
			s, err := Listen(addr, tests, con.Stderr)
			if err != nil {
				return err
			}
			fmt.Fprintf(con.Stderr, "cnperf serve stream: listening on %s (tcp and udp)\n", s.Addr())
			return s.Serve(ctx)
		},
	}.Cobra(con)
}

// ClientCommand is `cnperf stream`, the client, in the shell every
// socket workload's client runs in.
func ClientCommand(con workload.Console) *cobra.Command {
	var noGSO bool
	return shell.Command(con, shell.Client{
		Workload: descriptors.Stream,
		Short:    "Measure TCP or UDP bulk throughput against `cnperf serve stream`, like iperf3 -c",
		Example: `  cnperf stream --server 198.18.0.2 -t 10s -P 4
  cnperf stream --server 198.18.0.2 -t 10s -P 8 --threads 2
  cnperf stream --server 198.18.0.2 --udp -b 100M -l 1400 --json`,
		Time:     10 * time.Second,
		TimeHelp: "measured time (10s; a bare number is seconds)",
		Interval: DefaultInterval,
		Flags: func(f *pflag.FlagSet) {
			f.BoolVar(&noGSO, "no-gso", false, "UDP as fast as possible (-b 0): one datagram per write, as iperf3 3.12, not 64 with segmentation offload (UDP_SEGMENT)")
		},
		Run: func(ctx context.Context, r shell.Run) error {
			p := r.Params
			udp := p.Text("protocol") == "udp"
			cfg := Config{Addr: r.Server, Protocol: "tcp", Duration: r.Time, Omit: p.Dur("omit"), Interval: r.Interval,
				Parallel: int(max(p.Int("parallel"), 1)), Length: int(p.Int("length")), Threads: int(p.Int("threads"))}
			if udp {
				cfg.Protocol = "udp"
			}
			if bitrate := p.Text("rate"); bitrate != "" {
				rate, err := shell.ParseRate(bitrate)
				if err != nil {
					return fmt.Errorf("--bitrate %q: want a bit rate such as 500K, 100M or 10G", bitrate)
				}
				if rate == 0 && udp {
					rate = descriptors.StreamUnlimitedRate // as iperf3: -b 0 is unlimited
				}
				cfg.Rate = rate
			}
			if noGSO {
				if !udp || cfg.Rate < descriptors.StreamUnlimitedRate {
					return fmt.Errorf("--no-gso: only with --udp -b 0 (UDP as fast as possible), the one test sent with segmentation offload")
				}
				cfg.NoGSO = true
			}
			if p.Bool("copy") {
				if udp || (cfg.Rate != 0 && cfg.Rate < descriptors.StreamUnlimitedRate) {
					return fmt.Errorf("--copy: only with TCP as fast as possible (no --udp, no -b), the one test sent with sendfile")
				}
				cfg.Copy = true
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			out := newStreamPrinter(r.Stdout, cfg, r.JSON)
			r.Start()
			if !r.JSON {
				fmt.Fprintf(r.Stdout, "Connecting to %s (%s, %d stream(s), %s", cfg.Addr, cfg.Protocol, cfg.Parallel, cfg.Duration)
				if cfg.Omit > 0 {
					fmt.Fprintf(r.Stdout, " after %s warm-up", cfg.Omit)
				}
				fmt.Fprintln(r.Stdout, ")")
			}
			res, err := Run(ctx, cfg, out.interval)
			if res.Duration > 0 || res.SenderBytes > 0 {
				out.result(res)
			}
			return workload.Fail(err)
		},
	})
}

// streamPrinter prints intervals and the result as iperf3 does, or as JSON
// lines.
type streamPrinter struct {
	w      io.Writer
	cfg    Config
	json   bool
	env    *workload.Printer // --json
	header bool
}

func newStreamPrinter(w io.Writer, cfg Config, jsonOut bool) *streamPrinter {
	return &streamPrinter{w: w, cfg: cfg, json: jsonOut, env: workload.NewPrinter(w, WorkloadName)}
}

func (p *streamPrinter) udp() bool { return p.cfg.Protocol == "udp" }

func (p *streamPrinter) id(s int) string {
	if s == StreamSum {
		if p.cfg.Parallel > 1 {
			return "SUM"
		}
		return "  0"
	}
	return fmt.Sprintf("%3d", s)
}

func (p *streamPrinter) printHeader() {
	if p.udp() {
		fmt.Fprintln(p.w, "[ ID] Interval           Transfer     Bitrate         Datagrams")
	} else {
		fmt.Fprintln(p.w, "[ ID] Interval           Transfer     Bitrate         Retr")
	}
}

func (p *streamPrinter) interval(iv Interval) {
	if p.json {
		_ = p.env.Print(workload.KindInterval, iv)
		return
	}
	if iv.Side != SideSender {
		return // the receiver's intervals arrive at the end: in --json only
	}
	if !p.header {
		p.printHeader()
		p.header = true
	}
	line := fmt.Sprintf("[%s] %6.2f-%-6.2f sec  %s  %s", p.id(iv.Stream), iv.Start, iv.End, formatBytes(float64(iv.Bytes)), formatBits(iv.BitsPerSecond))
	if p.udp() {
		line += fmt.Sprintf("  %d", iv.Packets)
	} else {
		line += fmt.Sprintf("  %4d", iv.Retransmits)
	}
	if iv.Omitted {
		line += "  (omitted)"
	}
	fmt.Fprintln(p.w, line)
}

func (p *streamPrinter) result(r Result) {
	if p.json {
		_ = p.env.Print(workload.KindEnd, r)
		return
	}
	start := p.cfg.Omit.Seconds()
	end := start + r.Duration
	fmt.Fprintln(p.w, "- - - - - - - - - - - - - - - - - - - - - - - - -")
	if p.udp() {
		fmt.Fprintln(p.w, "[ ID] Interval           Transfer     Bitrate         Lost/Total Datagrams")
		fmt.Fprintf(p.w, "[%s] %6.2f-%-6.2f sec  %s  %s                       sender\n", p.id(StreamSum), start, end,
			formatBytes(float64(r.SenderBytes)), formatBits(r.SenderBitsPerSecond))
		fmt.Fprintf(p.w, "[%s] %6.2f-%-6.2f sec  %s  %s  %d/%d (%.3g%%), %d out of order  receiver\n", p.id(StreamSum), start, end,
			formatBytes(float64(r.ReceiverBytes)), formatBits(r.ReceiverBitsPerSecond), r.Lost, r.Packets, r.LossPercent, r.OutOfOrder)
		return
	}
	fmt.Fprintln(p.w, "[ ID] Interval           Transfer     Bitrate         Retr")
	fmt.Fprintf(p.w, "[%s] %6.2f-%-6.2f sec  %s  %s  %4d  sender\n", p.id(StreamSum), start, end,
		formatBytes(float64(r.SenderBytes)), formatBits(r.SenderBitsPerSecond), r.Retransmits)
	fmt.Fprintf(p.w, "[%s] %6.2f-%-6.2f sec  %s  %s        receiver\n", p.id(StreamSum), start, end,
		formatBytes(float64(r.ReceiverBytes)), formatBits(r.ReceiverBitsPerSecond))
}

// formatBytes uses powers of 1024, as iperf3's Transfer column.
func formatBytes(b float64) string {
	return inUnits(b, 1024, "%6.*f %-6s", "Bytes", "KBytes", "MBytes", "GBytes", "TBytes")
}

// formatBits uses powers of 1000, as iperf3's Bitrate column.
func formatBits(b float64) string {
	return inUnits(b, 1000, "%6.*f %-9s", "bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec")
}

// inUnits writes v in the largest of units (each base times the one
// before) it reaches, with prec's decimals.
func inUnits(v, base float64, format string, units ...string) string {
	i := 0
	for v >= base && i < len(units)-1 {
		v /= base
		i++
	}
	return fmt.Sprintf(format, prec(v), v, units[i])
}

func prec(v float64) int {
	switch {
	case v < 9.995:
		return 2
	case v < 99.95:
		return 1
	}
	return 0
}
