// Package stream implements cnperf's bulk-throughput workload, in the style
// of iperf3: a server that receives TCP or UDP streams and a client that
// sends them for a fixed time, reporting per-interval sender-side numbers
// (bytes, TCP retransmits from TCP_INFO) and, from the server at the end,
// receiver-side numbers (bytes, UDP datagrams received, lost and out of order
// by sequence number).
//
// Like iperf3, control and data share one port: TCP data connections are
// accepted on the control listener and UDP datagrams go to the same port
// number over UDP, so a server behind a published (DNAT) port needs that port
// published for both TCP and UDP.
package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// Defaults and limits.
const (
	DefaultTCPLength = 128 << 10 // TCP write size, as iperf3
	DefaultUDPLength = 1470      // UDP datagram payload, as iperf3
	DefaultUDPRate   = 1_000_000 // bits/s per stream, as iperf3
	DefaultInterval  = time.Second
	WorkloadName     = descriptors.StreamName
	SideSender       = "sender"
	SideReceiver     = "receiver"
	StreamSum        = -1
	endGrace         = 10 * time.Second
	udpDrain         = 250 * time.Millisecond
	// maxControlMessage bounds what one control connection may send in
	// all: a test request, start and done (at most
	// descriptors.StreamMaxParallel counters) take a few kB.
	maxControlMessage = 16 << 10
	// maxBinCells bounds the per-interval records the server keeps for a
	// test, over all its streams (32 bytes each for UDP): a test with more
	// intervals than fit is recorded in coarser ones (serverInterval).
	maxBinCells = 1 << 16
	// maxHandlers bounds the connections the server reads from at once
	// (control connections and data connections before they join a test);
	// beyond it, a new connection is closed at once.
	maxHandlers = 2*descriptors.StreamMaxParallel + 64
	// maxServerCells bounds the bin records of all running tests together
	// (128 MiB of UDP records): with many tests, each keeps fewer (at
	// least maxServerCells/serverkit.MaxTests = 4096, enough for 32 bins on each of
	// descriptors.StreamMaxParallel streams) and may be recorded in coarser intervals.
	maxServerCells = 1 << 22
)

// ErrBusy is returned by Run when the server is running another test.
var ErrBusy = errors.New("server busy: another test is running, try again when it is done")

// Interval is the traffic of one stream (or the sum of all, Stream = -1) in
// one reporting interval, as the sender or the receiver saw it.
type Interval struct {
	Workload      string  `json:"workload"` // always "stream"
	Protocol      string  `json:"protocol"` // tcp or udp
	Stream        int     `json:"stream"`   // from 0; -1 is the sum over streams
	Start         float64 `json:"start"`    // seconds from the test's start (warm-up included)
	End           float64 `json:"end"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   int64   `json:"retransmits"`  // TCP, sender side, from TCP_INFO
	Packets       int64   `json:"packets"`      // UDP: datagrams sent (sender) or received (receiver)
	Lost          int64   `json:"lost"`         // UDP, receiver: missing by sequence number
	OutOfOrder    int64   `json:"out_of_order"` // UDP, receiver: arrived after a later one
	Omitted       bool    `json:"omitted"`      // in the warm-up: excluded from Result
	Side          string  `json:"side"`         // sender or receiver
}

// Result sums the intervals that were not omitted.
type Result struct {
	Workload              string  `json:"workload"` // always "stream"
	Protocol              string  `json:"protocol"`
	Duration              float64 `json:"duration_s"` // measured seconds (sender, warm-up excluded)
	Streams               int     `json:"streams"`
	SenderBytes           int64   `json:"sender_bytes"`
	ReceiverBytes         int64   `json:"receiver_bytes"`
	SenderBitsPerSecond   float64 `json:"sender_bits_per_second"`
	ReceiverBitsPerSecond float64 `json:"receiver_bits_per_second"`
	Retransmits           int64   `json:"retransmits"`
	Packets               int64   `json:"packets"` // UDP: datagrams the receiver expected (received + lost)
	Lost                  int64   `json:"lost"`
	LossPercent           float64 `json:"loss_percent"`
	OutOfOrder            int64   `json:"out_of_order"`
	// How the sender sent, so figures stay comparable: IO "loop" (a
	// thread per share of the streams, raw system calls: TCP and UDP as
	// fast as possible) or
	// "netpoller" (a goroutine per stream: paced tests); Send, for TCP,
	// "sendfile" (each block the pages of a file, not copied from user
	// memory, as iperf3 -Z: TCP as fast as possible), from SendFile
	// "tmpfile" (an unnamed file in the temporary directory) or "memfd",
	// or "write" (copied, as iperf3 without -Z: --copy, and paced
	// tests); UDPGSO the datagrams per write with segmentation offload
	// (0: none); SendBuffer the socket's send buffer in bytes (the
	// kernel's; cnperf sets none, as iperf3 without -w).
	IO         string `json:"io"`
	Send       string `json:"send,omitempty"`
	SendFile   string `json:"send_file,omitempty"`
	UDPGSO     int    `json:"udp_gso_segments,omitempty"`
	SendBuffer int    `json:"send_buffer_bytes,omitempty"`
	// Threads is the OS threads that sent the streams (TCP as fast as
	// possible: each a loop over its share of the streams); 0 (absent)
	// in runs recorded before senders were threaded, and in paced and
	// UDP tests, whose streams each have a goroutine of their own.
	Threads int `json:"threads,omitempty"`
}

// Config is one test as the client runs it.
type Config struct {
	Addr     string        // host:port of the server's control port
	Protocol string        // "tcp" (default) or "udp"
	Duration time.Duration // measured time, after the warm-up
	Omit     time.Duration // warm-up, sent but excluded from the Result
	Interval time.Duration // reporting interval; 0: 1 s
	Parallel int           // streams; 0: 1
	Length   int           // TCP write size or UDP datagram payload; 0: 128 KiB (TCP), 1470 (UDP)
	// Rate is the target bit rate of each stream (as iperf3's -b). 0: TCP
	// unlimited, UDP 1 Mbit/s; descriptors.StreamUnlimitedRate: as fast as possible.
	Rate int64
	// NoGSO sends UDP as fast as possible one datagram per write, as
	// iperf3 3.12 does, instead of with segmentation offload.
	NoGSO bool
	// Copy sends TCP as fast as possible with write(2) from user memory,
	// as iperf3 without -Z, instead of with sendfile(2) from a file.
	Copy bool
	// Threads spreads the streams of TCP as fast as possible over this
	// many OS threads on each side, sender and receiver, each a loop over
	// its share of the streams (as iperf3 3.16+ gives each stream a
	// thread); 0: DefaultThreads. At most Parallel.
	Threads int
	// Dial opens the control and TCP data connections ("tcp") and the UDP
	// sockets ("udp", used connected); nil: a net.Dialer. The runner sets it
	// to dial from inside a network namespace.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	c.Protocol = cmp.Or(c.Protocol, "tcp")
	c.Interval = cmp.Or(c.Interval, DefaultInterval)
	c.Parallel = cmp.Or(c.Parallel, 1)
	if c.Length == 0 {
		if c.Protocol == "udp" {
			c.Length = DefaultUDPLength
		} else {
			c.Length = DefaultTCPLength
		}
	}
	if c.Rate == 0 && c.Protocol == "udp" {
		c.Rate = DefaultUDPRate
	}
	return c
}

// Validate checks the configuration (after defaults) and names the
// offending flag in a one-line error.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Protocol != "tcp" && c.Protocol != "udp":
		return fmt.Errorf("--protocol %q: want tcp or udp", c.Protocol)
	case c.Duration <= 0:
		return fmt.Errorf("--time %s: must be > 0", c.Duration)
	case c.Duration > workload.MaxDuration:
		return fmt.Errorf("--time %s: must be <= %s", c.Duration, workload.MaxDuration)
	case c.Omit < 0:
		return fmt.Errorf("--omit %s: must be >= 0", c.Omit)
	case c.Omit > workload.MaxDuration:
		return fmt.Errorf("--omit %s: must be <= %s", c.Omit, workload.MaxDuration)
	case c.Interval < workload.MinInterval:
		return fmt.Errorf("--interval %s: must be >= %s", c.Interval, workload.MinInterval)
	case c.Interval > workload.MaxDuration:
		// Also keeps the sums of durations in boundaries from overflowing.
		return fmt.Errorf("--interval %s: must be <= %s", c.Interval, workload.MaxDuration)
	case c.Parallel < 1 || c.Parallel > descriptors.StreamMaxParallel:
		return fmt.Errorf("--parallel %d: must be in [1, %d]", c.Parallel, descriptors.StreamMaxParallel)
	case c.Rate < 0:
		return fmt.Errorf("--bitrate %d: must be >= 0", c.Rate)
	case c.Rate > descriptors.StreamUnlimitedRate:
		return fmt.Errorf("--bitrate %d: must be <= %d (0: unlimited)", c.Rate, descriptors.StreamUnlimitedRate)
	case c.Threads < 0 || c.Threads > descriptors.StreamMaxParallel:
		return fmt.Errorf("--threads %d: must be in [1, %d]", c.Threads, descriptors.StreamMaxParallel)
	case c.Threads > c.Parallel:
		return fmt.Errorf("--threads %d: more than the %d stream(s) of --parallel", c.Threads, c.Parallel)
	case c.Threads > 1 && (c.Protocol != "tcp" || (c.Rate != 0 && c.Rate < descriptors.StreamUnlimitedRate)):
		return fmt.Errorf("--threads %d: only for TCP as fast as possible (no --udp, no -b): paced and UDP streams each have a thread of their own", c.Threads)
	case c.Length < 0:
		return fmt.Errorf("--length %d: must be > 0", c.Length)
	case c.Protocol == "udp" && c.Length > descriptors.MaxUDPPayload:
		return fmt.Errorf("--length %d: a UDP datagram carries at most %d bytes", c.Length, descriptors.MaxUDPPayload)
	case c.Protocol == "udp" && c.Length < descriptors.StreamUDPHeader:
		return fmt.Errorf("--length %d: a UDP datagram needs at least %d bytes for its header", c.Length, descriptors.StreamUDPHeader)
	case c.Protocol == "tcp" && c.Length > descriptors.StreamMaxTCPLength:
		return fmt.Errorf("--length %d: must be <= %d", c.Length, descriptors.StreamMaxTCPLength)
	}
	if n := countBins(c.Omit, c.Duration, c.Interval); n > descriptors.StreamMaxIntervals {
		return fmt.Errorf("--interval %s: %d intervals in %s, more than %d", c.Interval, n, c.Omit+c.Duration, descriptors.StreamMaxIntervals)
	}
	return nil
}

// DefaultThreads is the threads a test of parallel streams is sent and
// received with when Config.Threads is 0: one per stream up to the CPUs
// this process may use (its affinity, and GOMAXPROCS, which follows a
// container's CPU limit), so a test scales with cores as iperf3 3.16+
// does, without more threads than cores taking turns on them.
func DefaultThreads(parallel int) int {
	return max(1, min(parallel, runtime.NumCPU(), runtime.GOMAXPROCS(0)))
}

// threads is the threads the test runs with (after defaults).
func (c Config) threads() int {
	if c.Threads > 0 {
		return c.Threads
	}
	return DefaultThreads(c.Parallel)
}

// countBins is len(boundaries(omit, duration, interval)) - 1, without
// building them.
func countBins(omit, duration, interval time.Duration) int64 {
	ceil := func(d time.Duration) int64 { return int64((d + interval - 1) / interval) }
	return ceil(omit) + ceil(duration)
}

// serverInterval is the interval the server records a test in: the
// client's, or a whole multiple of it such that all streams' bins together
// stay within cells (at most maxBinCells). A test so coarsened is reported
// in longer intervals; its totals are the same.
func serverInterval(c Config, cells int64) time.Duration {
	perStream := max(cells/int64(max(c.Parallel, 1)), 1)
	iv := c.Interval
	if n := countBins(c.Omit, c.Duration, iv); n > perStream {
		iv *= time.Duration((n + perStream - 1) / perStream)
	}
	// Rounding up each part may leave one bin too many: widen until it fits.
	for countBins(c.Omit, c.Duration, iv) > perStream {
		iv += c.Interval
	}
	return iv
}

// boundaries are the interval edges in time since the test's start: the
// warm-up cut into intervals, then the measured time, so no interval
// straddles the end of the warm-up.
func boundaries(omit, duration, interval time.Duration) []time.Duration {
	b := []time.Duration{0}
	for t := interval; t < omit; t += interval {
		b = append(b, t)
	}
	if omit > 0 {
		b = append(b, omit)
	}
	for t := omit + interval; t < omit+duration; t += interval {
		b = append(b, t)
	}
	return append(b, omit+duration)
}
