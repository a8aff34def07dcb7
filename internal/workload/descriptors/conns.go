package descriptors

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

// The conns workload's name, ports and bounds.
const (
	ConnsName = "conns"
	// ConnsPort is the server's rr port (the latency probe); the held
	// connections go to the ConnsHoldPorts ports after it, so that the
	// 4-tuples of one client address reach past one port's source ports.
	ConnsPort      = 5210
	ConnsHoldPorts = 16
	// ConnsMax bounds connections: what one client holds and one server
	// accepts, each an open file.
	ConnsMax = 1 << 20
	// ConnsMaxTrickleRate bounds the bytes a second all held connections
	// trickle together (connections / trickle).
	ConnsMaxTrickleRate = 200_000
	ConnsMaxTimeout     = int64(60e9)
)

// Conns holds many TCP connections open, idle or trickling, while an rr
// probe measures the round trip beside them: what the connection state a
// datapath keeps (conntrack, NAT) costs in latency and where it refuses.
var Conns workload.Socket = conns{}

type conns struct{}

func (conns) Name() string     { return ConnsName }
func (conns) Headline() string { return "rtt_p99" }
func (conns) Capabilities() []workload.Capability {
	return []workload.Capability{workload.RoundTrip, workload.ConnState}
}

func (conns) Metrics() []workload.Metric {
	count := func(key, title, short string) workload.Metric {
		return workload.Metric{Key: key, Title: title, Unit: "count", Short: short, Additive: true, Count: true}
	}
	return []workload.Metric{
		{Key: "rtt_p50", Title: "Round trip beside the connections, median", Unit: "µs", Short: "RTT p50 µs"},
		{Key: "rtt_p99", Title: "Round trip beside the connections, 99th pct", Unit: "µs", Short: "RTT p99 µs"},
		count("conns_established", "Connections established", "estab"),
		count("conns_refused", "Connections refused", "refused"),
		count("conns_timed_out", "Connections timed out", "timed out"),
		count("conns_reset", "Connections reset", "reset"),
		count("conns_failed", "Connections failed otherwise", "failed"),
		count("conns_lost", "Held connections lost", "lost"),
		count("conns_unopened", "Connections not attempted in the time opening may take", "unopened"),
		// From the lab's namespaces during the cell (record.CellConntrack).
		count("ct_entries", "Conntrack entries, peak, summed over the lab's namespaces", "ct entries"),
		{Key: "ct_memory_kib", Title: "Conntrack entries' memory (entries × slab object)", Unit: "KiB", Short: "ct KiB", Additive: true},
		count("ct_drops", "Conntrack drops (drop, early_drop, insert_failed)", "ct drops"),
	}
}

func (conns) Server() workload.Server {
	s := workload.Server{Role: "conns-server", Port: ConnsPort, Protocols: []string{"tcp"},
		Args: []string{"serve", "conns", "--listen", ":" + strconv.Itoa(ConnsPort)}}
	for i := 1; i <= ConnsHoldPorts; i++ {
		s.More = append(s.More, workload.Port{Number: ConnsPort + i, Protocol: "tcp"})
	}
	return s
}

func (conns) Params() []workload.Param {
	return []workload.Param{
		{Name: "connections", Kind: workload.Whole, Unit: "connections", Bounds: []workload.Bound{{Max: ConnsMax}},
			Flag: "--connections", Short: "n", Default: "0", Sweep: true,
			Help: "TCP connections held open beside the probe (each an open file at both ends); 0: the probe alone"},
		{Name: "trickle", Kind: workload.Duration, Bounds: []workload.Bound{{Max: int64(time.Hour)}}, Flag: "--trickle", Default: "0s",
			Help: "each held connection sends a byte this often (0: idle); at most " + strconv.Itoa(ConnsMaxTrickleRate) + " bytes/s in all"},
		{Name: "timeout", Kind: workload.Duration, Bounds: []workload.Bound{{Min: int64(time.Millisecond), Max: ConnsMaxTimeout}}, Flag: "--timeout", Default: "3s",
			Help: "a connection not established within this is counted as timed out"},
	}
}

func (conns) Validate(t workload.Test) error {
	return ConnsTrickleFits(t.Params.Int("connections"), t.Params.Dur("trickle"))
}

// ConnsTrickleFits refuses a trickle faster than ConnsMaxTrickleRate in all.
func ConnsTrickleFits(n int64, every time.Duration) error {
	if every > 0 && float64(n)/every.Seconds() > ConnsMaxTrickleRate {
		return workload.Bad("trickle", "%s for %d connections is %.0f bytes/s; at most %d: trickle at least every %s",
			every, n, float64(n)/every.Seconds(), ConnsMaxTrickleRate, time.Duration(float64(n)/ConnsMaxTrickleRate*1e9).Round(time.Millisecond))
	}
	return nil
}

// ConnsResult is the conns client's total record.
type ConnsResult struct {
	Workload    string    `json:"workload"` // "conns"
	Type        string    `json:"type"`     // "result"
	Requested   int64     `json:"requested"`
	Established int64     `json:"established"`
	Refused     int64     `json:"refused"`   // ECONNREFUSED: a RST or an ICMP unreachable answered the SYN
	TimedOut    int64     `json:"timed_out"` // no answer within the timeout (a dropped SYN)
	Reset       int64     `json:"reset"`     // ECONNRESET during the handshake
	Failed      int64     `json:"failed"`    // any other error (no source port left, no route)
	Lost        int64     `json:"lost"`      // established, then closed or reset while held
	Unopened    int64     `json:"unopened"`  // not attempted within the time opening may take
	OpenSeconds float64   `json:"open_s"`    // how long opening them took
	Trickle     float64   `json:"trickle_s,omitempty"`
	RoundTrip   rrLatency `json:"round_trip_us"`
	TransPerSec float64   `json:"trans_per_s"`
}

func (conns) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[ConnsResult](payload)
	if err != nil {
		return workload.Total{}, err
	}
	return workload.Total{Protocol: "tcp", Values: map[string]float64{
		"rtt_p50": r.RoundTrip.P50, "rtt_p99": r.RoundTrip.P99,
		"conns_established": float64(r.Established), "conns_refused": float64(r.Refused),
		"conns_timed_out": float64(r.TimedOut), "conns_reset": float64(r.Reset), "conns_failed": float64(r.Failed),
		"conns_lost": float64(r.Lost), "conns_unopened": float64(r.Unopened)}}, nil
}
