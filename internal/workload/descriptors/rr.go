package descriptors

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

// The rr workload's name, port, protocols and bounds.
const (
	RRName        = "rr"
	RRPort        = 5202
	RRTCP         = "tcp" // TCP_RR: one connection per worker
	RRUDP         = "udp" // UDP_RR
	RRCRR         = "crr" // TCP_CRR: connect, request, response, close
	RRMaxTCPSize  = 16 << 20
	RRMaxParallel = 256
	RRMaxTimeout  = int64(3600e9) // 1h
	// RRMaxLoad bounds under_load: the streams of the load beside the
	// probe.
	RRMaxLoad = 64
	// RRLoadTail is how long the load outlives the probe, so that the
	// probe's last interval is loaded as its first.
	RRLoadTail = time.Second
)

// RR is request/response transactions, as netperf's TCP_RR, UDP_RR and
// TCP_CRR.
var RR workload.Socket = rr{}

type rr struct{}

func (rr) Name() string     { return RRName }
func (rr) Headline() string { return "trans_per_s" }

// Capabilities: rr measures the round trip, so a chain of hosts also
// measures each segment and tables show its hops.
func (rr) Capabilities() []workload.Capability { return []workload.Capability{workload.RoundTrip} }

func (rr) Metrics() []workload.Metric {
	return []workload.Metric{
		{Key: "trans_per_s", Title: "Transactions", Unit: "1/s", HigherIsBetter: true, Short: "trans/s", Additive: true},
		{Key: "rtt_p50", Title: "Round trip, median", Unit: "µs", Short: "RTT p50 µs"},
		{Key: "rtt_p99", Title: "Round trip, 99th pct", Unit: "µs", Short: "RTT p99 µs"},
		{Key: "one_way_p50", Title: "One way (round trip / 2), median", Unit: "µs", Short: "1-way p50 µs (RTT/2)"},
		{Key: "rr_lost", Title: "Lost transactions", Unit: "count", Short: "lost", Additive: true, Count: true},
		// From the client's TCP_INFO (tcp and crr), as stream's
		// retransmits: the client's own, summed over its connections.
		{Key: "retransmits", Title: "TCP retransmits", Unit: "segments", Short: "retrans", Additive: true, Count: true},
		{Key: "rtt_us", Title: "TCP smoothed RTT (kernel), mean", Unit: "µs", Short: "srtt µs"},
		{Key: "cwnd", Title: "TCP congestion window, mean", Unit: "segments", Short: "cwnd"},
	}
}

func (rr) Server() workload.Server {
	return workload.Server{Role: "rr-server", Port: RRPort, Protocols: []string{"tcp", "udp"},
		Args: []string{"serve", "rr", "--listen", ":" + strconv.Itoa(RRPort)}}
}

func (rr) Params() []workload.Param {
	size := func(name, flag, short, what string) workload.Param {
		return workload.Param{Name: name, Kind: workload.Whole, Unit: "bytes", Bounds: []workload.Bound{
			{Protocol: RRUDP, Min: 1, Max: MaxUDPPayload, What: "UDP datagram"},
			{Min: 1, Max: RRMaxTCPSize, What: "rr message over TCP"}},
			Flag: flag, Short: short, Default: "1", Sweep: true, Help: what + " size in bytes"}
	}
	return []workload.Param{
		{Name: "protocol", Kind: workload.Choice, Choices: []string{RRTCP, RRUDP, RRCRR}, Flag: "--protocol", Alias: "--mode", Default: RRTCP,
			Help: "tcp (TCP_RR), udp (UDP_RR) or crr (TCP_CRR: connect, request, response, close)"},
		omit(),
		{Name: "parallel", Kind: workload.Whole, Unit: "workers", Bounds: []workload.Bound{{Min: 1, Max: RRMaxParallel}},
			Flag: "--parallel", Short: "P", Default: "1", Sweep: true, Help: "workers, one connection each"},
		size("request", "--request", "r", "request"),
		size("response", "--response", "R", "response"),
		{Name: "timeout", Kind: workload.Duration, Bounds: []workload.Bound{{Max: RRMaxTimeout}}, Flag: "--timeout", Default: "0s",
			Help: "udp: a response later than this is lost (default 1s); tcp, crr: bound on connecting and on a crr transaction (default 10s)"},
		// fit_mtu: the runner measures the path and applies it (FitTo).
		{Name: "fit_mtu", Kind: workload.Switch,
			Help: "request = response = the path MTU − 32 in each mode (1468 bytes on a 1500-byte path, 1418 on the 1450-byte overlay), as the 2017 Coherence thesis chose so that no packet fragments; leave request and response out"},
		// under_load runs the probe beside a TCP stream of that many
		// parallel streams from the same client to the same server host
		// (flent's RRUL); 0 is the idle probe, so a sweep 0..N gives the
		// idle and the loaded percentiles as cases. The runner starts the
		// load (Load); the client never sees it.
		{Name: "under_load", Kind: workload.Whole, Unit: "streams", Bounds: []workload.Bound{{Max: RRMaxLoad}}, Sweep: true, Default: "0",
			Help: "run beside a TCP stream of this many parallel streams to the same server host (latency under load); 0: idle"},
		{Name: "busy_poll", Kind: workload.Switch, Flag: "--busy-poll",
			Help: "spin on non-blocking calls instead of blocking, as sockperf --nonblocked: the CPU never idles (a CPU per worker; refused on a one-CPU machine)"},
	}
}

func (rr) Validate(t workload.Test) error {
	p := t.Params
	if p.Bool("fit_mtu") && (p.Set("request") || p.Set("response")) {
		return workload.Bad("fit_mtu", "sets request and response from the path MTU; leave them out")
	}
	req, resp := max(p.Int("request"), 1), max(p.Int("response"), 1)
	if p.Text("protocol") == RRUDP && req < 4 && resp != req {
		return workload.Bad("response", "%d: a UDP request under 4 bytes cannot carry the response size; use request >= 4 or response %d", resp, req)
	}
	if p.Int("under_load") > 0 && p.Text("protocol") == RRUDP {
		return workload.Bad("under_load", "for protocol tcp and crr: the load is a TCP stream, and a UDP probe's losses under it are not latency")
	}
	if p.Bool("busy_poll") {
		if p.Text("protocol") == RRCRR {
			return workload.Bad("busy_poll", "for protocol tcp and udp; crr blocks in connect once per transaction")
		}
		if err := BusyPollFits(int(max(p.Int("parallel"), 1)), MachineCPUs()); err != nil {
			return workload.Bad("busy_poll", "%v", err)
		}
	}
	return nil
}

// Load is the stream an rr test with under_load runs beside it: as many
// parallel TCP streams, for the probe's warm-up and duration and a tail,
// reporting at the probe's interval, so both series share a time axis.
func (rr) Load(t workload.Test) (workload.Test, workload.Socket, bool) {
	n := t.Params.Int("under_load")
	if n <= 0 || t.Planned() == 0 {
		return workload.Test{}, nil, false
	}
	return workload.Test{Workload: StreamName, Duration: t.Planned() + RRLoadTail, Interval: t.Interval,
		Params: workload.Params{"parallel": n}}, Stream, true
}

// FitTo sets request and response to the packet size of the path (its MTU
// − 32, as the datagram workload's default), so that none fragments.
func (rr) FitTo(t workload.Test, mtu int) workload.Test {
	size := int64(DefaultPacketSize(mtu))
	t.Params = maps.Clone(t.Params) // fit_mtu is set: not nil
	t.Params["request"], t.Params["response"] = size, size
	return t
}

// rrLatency and rrTotal are the part of rr's total record analysis reads.
type rrLatency struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

type rrTotal struct {
	Protocol     string    `json:"rr_mode"` // tcp, udp or crr
	RequestSize  int       `json:"request_size"`
	ResponseSize int       `json:"response_size"`
	Transactions int64     `json:"transactions"`
	TransPerSec  float64   `json:"trans_per_s"`
	Lost         int64     `json:"lost"`
	RoundTrip    rrLatency `json:"round_trip_us"`
	OneWay       rrLatency `json:"one_way_us_half_rtt"`
	TCP          *struct {
		Retransmits int64   `json:"retransmits"`
		RTTUS       float64 `json:"rtt_us"`
		Cwnd        float64 `json:"snd_cwnd"`
	} `json:"tcp_info"` // absent in records from before the client read TCP_INFO
}

func (rr) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[rrTotal](payload)
	if err != nil {
		return workload.Total{}, err
	}
	v := map[string]float64{"trans_per_s": r.TransPerSec, "rtt_p50": r.RoundTrip.P50, "rtt_p99": r.RoundTrip.P99,
		"one_way_p50": r.OneWay.P50}
	if r.Protocol == RRUDP {
		v["rr_lost"] = float64(r.Lost)
	}
	if t := r.TCP; t != nil && r.Protocol != RRUDP {
		v["retransmits"], v["rtt_us"], v["cwnd"] = float64(t.Retransmits), t.RTTUS, t.Cwnd
	}
	moved := r.Transactions * int64(r.RequestSize+r.ResponseSize)
	return workload.Total{Protocol: r.Protocol, Values: v, Moved: moved}, nil
}

// BusyPollFits refuses busy polling where it would take the only CPU: a
// worker that never sleeps on a one-CPU machine starves the server, the
// network stack and the reporter it waits for.
func BusyPollFits(workers, cpus int) error {
	if cpus < 2 {
		return fmt.Errorf("this machine has %d CPU; busy polling spins one per worker and needs one more for the rest", cpus)
	}
	if workers >= cpus {
		return fmt.Errorf("%d workers would spin on all %d CPUs of this machine; use at most %d", workers, cpus, cpus-1)
	}
	return nil
}

// MachineCPUs is the number of CPUs online on the machine, whatever this
// process's affinity (a client pinned to one CPU may still busy poll).
func MachineCPUs() int {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if n, ok := ParseCPUList(string(b)); ok {
			return n
		}
	}
	return runtime.NumCPU()
}

// ParseCPUList counts the CPUs of a kernel CPU list ("0-3,8,10-11").
func ParseCPUList(s string) (int, bool) {
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0, false
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0, false
			}
		}
		n += b - a + 1
	}
	return n, n > 0
}
