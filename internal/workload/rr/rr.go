// Package rr implements the request/response workload in the style of
// netperf's TCP_RR, UDP_RR and TCP_CRR: a server answering every request of
// RequestSize bytes with ResponseSize bytes, and a client timing each
// transaction into an HDR histogram.
//
// Wire protocol (TCP, both tcp and crr): the client opens a connection
// with a 16-byte hello (magic "cnRR", flags, request size, response size; big
// endian uint32s), then sends requests of exactly the request size; the
// server answers each with exactly the response size. With flagOnce (crr) the
// server closes the connection after the first response, so the TIME_WAIT
// state lands on the server, not on the client's ephemeral ports.
//
// UDP: the server answers only UDP tests opened over TCP, so that it cannot
// be made to send to an address that did not ask (a spoofed source) nor
// more than the test asked for. Each worker opens a control connection with
// a hello carrying flagUDP and the sizes; the server answers with an 8-byte
// token. The worker's UDP socket sends a 12-byte registration ("cnRU" and
// the token) until the server echoes it; the server takes it only from the
// control connection's IP address, and from then on answers each datagram
// of exactly the request size from that socket's address with the response
// size, for as long as the control connection stays open (and datagrams
// arrive within the idle timeout). Requests carry the response size in
// their first 4 bytes (so none looks like a registration) and, from 8 bytes
// on, a sequence number in bytes 4..8; the response echoes the request's
// first min(8, request, response) bytes, so the client can discard a late
// answer to a request it already counted as lost.
package rr

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// MaxTimeout bounds --timeout: how long a UDP worker waits for a response.
const MaxTimeout = time.Duration(descriptors.RRMaxTimeout)

// Protocols, netperf's test styles.
const (
	ProtocolTCP = descriptors.RRTCP // TCP_RR: one connection per worker, many transactions
	ProtocolUDP = descriptors.RRUDP // UDP_RR: one socket per worker; a lost datagram times out
	ProtocolCRR = descriptors.RRCRR // TCP_CRR: connect, request, response, close per transaction
)

// Config describes one rr client run. Zero values take the defaults noted.
type Config struct {
	Addr         string        // server HOST[:PORT]; the port defaults to descriptors.RRPort
	Protocol     string        // "tcp" (default), "udp" or "crr"
	Duration     time.Duration // measured time, after the omitted warm-up
	Omit         time.Duration // warm-up before Duration, not counted in the Result
	Interval     time.Duration // reporting interval, default 1 s
	RequestSize  int           // bytes per request, default 1
	ResponseSize int           // bytes per response, default 1
	Parallel     int           // workers, one connection (socket) each; default 1
	// Timeout: udp, a response not back within it is counted as lost and the
	// worker goes on (default 1 s); tcp and crr, the bound on connecting and
	// (crr) on one whole transaction (default 10 s).
	Timeout time.Duration
	// BusyPoll spins on non-blocking calls instead of blocking, so the
	// client's CPU never idles (sockperf's --nonblocked): a CPU per worker.
	BusyPoll bool
	// Dial opens the client's connections (the runner dials from inside a
	// namespace); nil uses net.Dialer. crr dials once per transaction.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// withDefaults returns c with the zero fields set to their defaults.
func (c Config) withDefaults() Config {
	c.Protocol = cmp.Or(c.Protocol, ProtocolTCP)
	c.Interval = cmp.Or(c.Interval, time.Second)
	c.RequestSize = cmp.Or(c.RequestSize, 1)
	c.ResponseSize = cmp.Or(c.ResponseSize, 1)
	c.Parallel = cmp.Or(c.Parallel, 1)
	if c.Timeout == 0 {
		if c.Protocol == ProtocolUDP {
			c.Timeout = time.Second
		} else {
			c.Timeout = 10 * time.Second
		}
	}
	c.Addr = serverkit.WithPort(c.Addr, descriptors.RRPort)
	return c
}

// Validate checks c (zero fields taking their defaults) and returns a
// one-line error naming the command-line flag at fault.
func (c Config) Validate() error {
	if c.Addr == "" {
		return errors.New("--server: give the rr server's HOST[:PORT]")
	}
	c = c.withDefaults()
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("--server %q: want HOST[:PORT]", c.Addr)
	}
	max := descriptors.RRMaxTCPSize
	switch c.Protocol {
	case ProtocolTCP, ProtocolCRR:
	case ProtocolUDP:
		max = descriptors.MaxUDPPayload
	default:
		return fmt.Errorf("--protocol %q: want tcp, udp or crr", c.Protocol)
	}
	if c.Duration <= 0 || c.Duration > workload.MaxDuration {
		return fmt.Errorf("--time %s: must be > 0 and <= %s", c.Duration, workload.MaxDuration)
	}
	if c.Omit < 0 || c.Omit > workload.MaxDuration {
		return fmt.Errorf("--omit %s: must be >= 0 and <= %s", c.Omit, workload.MaxDuration)
	}
	if c.Interval < time.Millisecond || c.Interval > workload.MaxDuration {
		return fmt.Errorf("--interval %s: must be >= 1ms and <= %s", c.Interval, workload.MaxDuration)
	}
	if c.RequestSize < 1 || c.RequestSize > max {
		return fmt.Errorf("--request %d: must be in 1..%d for %s", c.RequestSize, max, c.Protocol)
	}
	if c.ResponseSize < 1 || c.ResponseSize > max {
		return fmt.Errorf("--response %d: must be in 1..%d for %s", c.ResponseSize, max, c.Protocol)
	}
	if c.Parallel < 1 || c.Parallel > descriptors.RRMaxParallel {
		return fmt.Errorf("--parallel %d: must be in 1..%d", c.Parallel, descriptors.RRMaxParallel)
	}
	if c.Timeout < 0 || c.Timeout > MaxTimeout {
		return fmt.Errorf("--timeout %s: must be > 0 and <= %s", c.Timeout, MaxTimeout)
	}
	if c.BusyPoll {
		if c.Protocol == ProtocolCRR {
			return errors.New("--busy-poll: for tcp and udp; crr blocks in connect once per transaction")
		}
		if err := busyPollCPUs(c.Parallel); err != nil {
			return fmt.Errorf("--busy-poll: %v", err)
		}
	}
	return nil
}

// busyPollCPUs refuses busy polling where it would take the only CPU
// (descriptors.BusyPollFits).
func busyPollCPUs(workers int) error {
	return descriptors.BusyPollFits(workers, descriptors.MachineCPUs())
}

// Latency summarises a latency distribution, in microseconds.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

// Half returns l with every figure halved (one-way = round trip / 2).
func (l Latency) Half() Latency {
	return Latency{Min: l.Min / 2, Mean: l.Mean / 2, P50: l.P50 / 2, P90: l.P90 / 2, P99: l.P99 / 2, P999: l.P999 / 2, Max: l.Max / 2}
}

// Bucket is one point of the round-trip distribution: Count transactions
// took at most ValueUS, which is the Percentile-th percentile.
type Bucket struct {
	ValueUS    float64 `json:"value_us"`
	Percentile float64 `json:"percentile"`
	Count      int64   `json:"count"` // cumulative
}

// TCPStats is what TCP_INFO said of the client's connections: tcp reads
// each worker's connection at the run's end, crr each measured
// transaction's connection before its close (after the server's FIN).
type TCPStats = tcpinfo.Stats

// Interval is one reporting interval of a run.
type Interval struct {
	Workload     string  `json:"workload"` // "rr"
	Type         string  `json:"type"`     // "interval"
	Protocol     string  `json:"rr_mode"`  // tcp, udp or crr
	Start        float64 `json:"start_s"`  // seconds since the run began (warm-up included)
	End          float64 `json:"end_s"`
	Omitted      bool    `json:"omitted,omitempty"` // inside the warm-up
	Transactions int64   `json:"transactions"`
	TransPerSec  float64 `json:"trans_per_s"`
	Lost         int64   `json:"lost,omitempty"` // udp: requests whose response timed out
	P50          float64 `json:"round_trip_p50_us"`
	P99          float64 `json:"round_trip_p99_us"`
}

// Result is the outcome of a run, warm-up excluded.
type Result struct {
	Workload     string    `json:"workload"` // "rr"
	Type         string    `json:"type"`     // "result"
	Protocol     string    `json:"rr_mode"`  // tcp, udp or crr (not the network mode)
	Time         time.Time `json:"ts"`       // when measuring began (after the warm-up)
	Duration     float64   `json:"duration_s"`
	RequestSize  int       `json:"request_size"`
	ResponseSize int       `json:"response_size"`
	Parallel     int       `json:"parallel"`
	Transactions int64     `json:"transactions"`
	TransPerSec  float64   `json:"trans_per_s"`
	Lost         int64     `json:"lost"` // udp only
	RoundTrip    Latency   `json:"round_trip_us"`
	// OneWay is RoundTrip / 2, as netperf users and sockperf report it: not
	// a measured one-way delay.
	OneWay    Latency  `json:"one_way_us_half_rtt"`
	Histogram []Bucket `json:"round_trip_histogram,omitempty"`
	// TCP is the kernel's TCP_INFO of the client's connections (tcp and
	// crr; none for udp).
	TCP *TCPStats `json:"tcp_info,omitempty"`
	// IO is how the workers waited for the server: "blocking" (raw
	// blocking calls, the thread keeping its P), "busy-poll" (spinning on
	// non-blocking calls) or "netpoller" (Go's, for a custom Dial's conns).
	IO string `json:"io"`
}
