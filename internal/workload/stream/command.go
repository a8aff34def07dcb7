package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
)

// serveCommand is `cnperf serve stream`.
func serveCommand(con workload.Console) *cobra.Command {
	stderr := con.Stderr
	var listen string
	var tests int
	cmd := &cobra.Command{
		Use:   "stream [--listen ADDR] [--tests N]",
		Short: "Receive stream tests: TCP and UDP bulk throughput, like iperf3 -s",
		Long: `Receive stream tests, one at a time (--tests N: up to N at once, each
measured on its own; one more is told the server is busy). Control and TCP
data use the TCP port, UDP data the UDP port of the same number: publish both.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tests < 1 || tests > MaxTests {
				return fmt.Errorf("--tests %d: must be in [1, %d]", tests, MaxTests)
			}
			addr, err := con.Listen(listen, DefaultPort)
			if err != nil {
				return err
			}
			s, err := Listen(addr, tests, stderr)
			if err != nil {
				return workload.Fail(err)
			}
			fmt.Fprintf(stderr, "cnperf serve stream: listening on %s (tcp and udp)\n", s.Addr())
			// A container's server is PID 1 of its pid namespace, where
			// signals without a handler are ignored: handle them.
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return workload.Fail(s.Serve(ctx))
		},
	}
	cmd.Flags().StringVar(&listen, "listen", con.DefaultListen(DefaultPort), con.ListenHelp+" (the port: TCP and UDP)")
	cmd.Flags().IntVar(&tests, "tests", 1, fmt.Sprintf("tests served at once, at most %d (1: as iperf3 -s)", MaxTests))
	return cmd
}

// clientCommand is `cnperf stream`, the client.
func clientCommand(con workload.Console) *cobra.Command {
	stdout := con.Stdout
	var server, length, bitrate string
	var udp, jsonOut, noGSO, copyTCP bool
	var parallel int
	dur := secondsOrDuration(10 * time.Second)
	omit := secondsOrDuration(0)
	interval := secondsOrDuration(DefaultInterval)
	cmd := &cobra.Command{
		Use:   "stream --server HOST[:PORT]",
		Short: "Measure TCP or UDP bulk throughput against `cnperf serve stream`, like iperf3 -c",
		Example: `  cnperf stream --server 198.18.0.2 -t 10s -P 4
  cnperf stream --server 198.18.0.2 --udp -b 100M -l 1400 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if server == "" {
				return fmt.Errorf("--server: give the server's address, e.g. 198.18.0.2 or 198.18.0.2:5201")
			}
			addr, err := hostPort(server)
			if err != nil {
				return fmt.Errorf("--server %q: %v", server, err)
			}
			if parallel < 1 || parallel > MaxParallel {
				return fmt.Errorf("--parallel %d: must be in [1, %d]", parallel, MaxParallel)
			}
			cfg := Config{Addr: addr, Protocol: "tcp", Duration: time.Duration(dur), Omit: time.Duration(omit),
				Interval: time.Duration(interval), Parallel: parallel}
			if udp {
				cfg.Protocol = "udp"
			}
			if length != "" {
				n, err := parseSize(length)
				if err != nil || n <= 0 || n > math.MaxInt32 {
					return fmt.Errorf("--length %q: want a positive size in bytes, e.g. 1470 or 128K", length)
				}
				cfg.Length = int(n)
			}
			if bitrate != "" {
				r, err := parseBitrate(bitrate)
				if err != nil {
					return fmt.Errorf("--bitrate %q: %v", bitrate, err)
				}
				if r == 0 && udp {
					r = UnlimitedRate // as iperf3: -b 0 is unlimited
				}
				cfg.Rate = r
			}
			if noGSO {
				if !udp || cfg.Rate < UnlimitedRate {
					return fmt.Errorf("--no-gso: only with --udp -b 0 (UDP as fast as possible), the one test sent with segmentation offload")
				}
				cfg.NoGSO = true
			}
			if copyTCP {
				if udp || (cfg.Rate != 0 && cfg.Rate < UnlimitedRate) {
					return fmt.Errorf("--copy: only with TCP as fast as possible (no --udp, no -b), the one test sent with sendfile")
				}
				cfg.Copy = true
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			out := newStreamPrinter(stdout, cfg, jsonOut)
			if jsonOut {
				_ = out.env.Print(workload.KindStart, workload.StartOf(cmd, addr))
			} else {
				fmt.Fprintf(stdout, "Connecting to %s (%s, %d stream(s), %s", addr, cfg.Protocol, max(parallel, 1), cfg.Duration)
				if cfg.Omit > 0 {
					fmt.Fprintf(stdout, " after %s warm-up", cfg.Omit)
				}
				fmt.Fprintln(stdout, ")")
			}
			res, err := Run(ctx, cfg, out.interval)
			if res.Duration > 0 || res.SenderBytes > 0 {
				out.result(res)
			}
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("interrupted: %w", context.Canceled)
				}
				return workload.Fail(err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&server, "server", "c", "", "server to measure against: HOST[:PORT] (port 5201 by default)")
	f.BoolVarP(&udp, "udp", "u", false, "UDP instead of TCP")
	f.VarP(&dur, "time", "t", "measured time (10s; a bare number is seconds)")
	f.Var(&omit, "omit", "warm-up sent before the measured time and left out of the summary")
	f.IntVarP(&parallel, "parallel", "P", 1, "parallel streams")
	f.StringVarP(&length, "length", "l", "", "TCP write size or UDP datagram payload (default 128K for TCP, 1470 for UDP)")
	f.StringVarP(&bitrate, "bitrate", "b", "", "target bit rate per stream, e.g. 100M or 10G (default unlimited for TCP, 1M for UDP; 0: unlimited)")
	f.VarP(&interval, "interval", "i", "reporting interval")
	f.BoolVar(&copyTCP, "copy", false, "TCP as fast as possible: write each block from user memory, as iperf3 without -Z, not sendfile(2) from a file")
	f.BoolVar(&noGSO, "no-gso", false, "UDP as fast as possible (-b 0): one datagram per write, as iperf3 3.12, not 64 with segmentation offload (UDP_SEGMENT)")
	f.BoolVar(&jsonOut, "json", false, "print every interval and the result as JSON lines")
	return cmd
}

// hostPort completes HOST into HOST:5201 (":5201" for an empty host).
func hostPort(s string) (string, error) {
	if host, port, err := net.SplitHostPort(s); err == nil {
		if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			return "", fmt.Errorf("bad port %q", port)
		}
		return net.JoinHostPort(host, port), nil
	}
	host := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if strings.ContainsAny(host, "[]/ ") {
		return "", errors.New("want HOST or HOST:PORT")
	}
	return net.JoinHostPort(host, strconv.Itoa(DefaultPort)), nil
}

// secondsOrDuration is a duration flag that also takes a bare number of
// seconds, as iperf3's -t does.
type secondsOrDuration time.Duration

func (d *secondsOrDuration) String() string { return time.Duration(*d).String() }
func (d *secondsOrDuration) Type() string   { return "duration" }
func (d *secondsOrDuration) Set(s string) error {
	if v, err := time.ParseDuration(s); err == nil {
		*d = secondsOrDuration(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e9 {
		return fmt.Errorf("want a duration such as 10s or a number of seconds")
	}
	*d = secondsOrDuration(time.Duration(f * float64(time.Second)))
	return nil
}

// parseBitrate reads bits per second with an optional K, M, G or T suffix
// (powers of 1000, as iperf3's -b).
func parseBitrate(s string) (int64, error) {
	v, err := parseScaled(s, 1000)
	if err != nil {
		return 0, errors.New("want a bit rate such as 500K, 100M or 10G")
	}
	return v, nil
}

// parseSize reads bytes with an optional K, M or G suffix (powers of 1024,
// as iperf3's -l).
func parseSize(s string) (int64, error) { return parseScaled(s, 1024) }

func parseScaled(s string, base float64) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = base
		case 'm', 'M':
			mult = base * base
		case 'g', 'G':
			mult = base * base * base
		case 't', 'T':
			mult = base * base * base * base
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*mult > float64(math.MaxInt64/2) {
		return 0, fmt.Errorf("bad value %q", s)
	}
	return int64(math.Round(f * mult)), nil
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
	units := []string{"Bytes", "KBytes", "MBytes", "GBytes", "TBytes"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return fmt.Sprintf("%6.*f %-6s", prec(b), b, units[i])
}

// formatBits uses powers of 1000, as iperf3's Bitrate column.
func formatBits(b float64) string {
	units := []string{"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec"}
	i := 0
	for b >= 1000 && i < len(units)-1 {
		b /= 1000
		i++
	}
	return fmt.Sprintf("%6.*f %-9s", prec(b), b, units[i])
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
