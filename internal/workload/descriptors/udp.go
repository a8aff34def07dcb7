package descriptors

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

// The names, port and bounds of jitter and datagram, which share a
// listener (`cnperf serve udp`).
const (
	JitterName    = "jitter"
	DatagramName  = "datagram"
	UDPPort       = 5203
	UDPHeaderSize = 24 // the smallest datagram a test sends
	// UDPMaxInterval bounds the listener's reporting interval.
	UDPMaxInterval   = time.Hour
	DatagramMaxCount = 1_000_000_000 // packets a spec's test may ask for
	// packetSizeHeadroom is what DefaultPacketSize leaves of the MTU.
	packetSizeHeadroom = 32
	// FallbackPacketSize is DefaultPacketSize(1500).
	FallbackPacketSize = 1468
)

// DefaultPacketSize is the datagram workload's packet size on a path of the
// given MTU: mtu − 32, which is how the 2017 Coherence thesis chose by hand 1468 bytes on a
// 1500-byte path and 1418 on the 1450-byte overlay (Coherence recommends
// 1468 for 1500). Clamped to [UDPHeaderSize, MaxUDPPayload]; 1468 when mtu <= 0.
func DefaultPacketSize(mtu int) int {
	if mtu <= 0 {
		return FallbackPacketSize
	}
	return min(max(mtu-packetSizeHeadroom, UDPHeaderSize), MaxUDPPayload)
}

// Jitter sends UDP at a constant rate and reports RFC 3550 jitter, loss and
// reordering, as iperf -u; Datagram publishes fixed-size packets and
// reports loss and reordering, as Coherence's Datagram Test.
var (
	Jitter   workload.Socket = jitter{}
	Datagram workload.Socket = datagram{}
)

// listener is what both share: the server and its bounds.
type listener struct{}

// Server serves one test at a time. A runner that points several clients
// at one listener (fan-out) appends "--tests", N to Args.
func (listener) Server() workload.Server {
	return workload.Server{Role: "udp-server", Port: UDPPort, Protocols: []string{"tcp", "udp"}, // tcp: control
		Args: []string{"serve", "udp", "--listen", fmt.Sprintf(":%d", UDPPort)}, Concurrent: "--tests"}
}

func (listener) Capabilities() []workload.Capability { return nil }

// validate: the listener reports at most hourly.
func (listener) validate(t workload.Test) error {
	if iv := t.ReportInterval(); iv > UDPMaxInterval {
		return workload.Bad("interval", "%s: the listener reports at most every %s", iv, UDPMaxInterval)
	}
	return nil
}

func udpLength(flag, short, dflt, help string) workload.Param {
	return workload.Param{Name: "length", Kind: workload.Whole, Unit: "bytes",
		Bounds: []workload.Bound{{Min: UDPHeaderSize, Max: MaxUDPPayload, What: "UDP datagram"}},
		Flag:   flag, Short: short, Default: dflt, Sweep: true, Help: help}
}

type jitter struct{ listener }

func (jitter) Name() string     { return JitterName }
func (jitter) Headline() string { return "jitter" }

func (jitter) Metrics() []workload.Metric {
	return []workload.Metric{
		{Key: "throughput", Title: "Throughput", Unit: "Mbit/s", HigherIsBetter: true, Short: "Mbit/s", Additive: true},
		{Key: "loss", Title: "Loss", Unit: "%", Short: "loss %"},
		{Key: "out_of_order", Title: "Out of order", Unit: "datagrams", Short: "out of order", Additive: true, Count: true},
		{Key: "jitter", Title: "Jitter (RFC 3550)", Unit: "ms", Short: "jitter ms"},
	}
}

func (jitter) Params() []workload.Param {
	return []workload.Param{
		udpLength("--length", "l", "1470", "datagram size (UDP payload bytes)"),
		{Name: "rate", Kind: workload.Rate, Unit: "bits/s", Flag: "--bitrate", Short: "b", Default: "10M", Sweep: true,
			Help: "target rate in bits/s (k, M, G: powers of 1000)"},
	}
}

func (j jitter) Validate(t workload.Test) error {
	if t.Params.Set("rate") && t.Params.Bits("rate") == 0 {
		return workload.Bad("rate", "%q: jitter needs a rate > 0", t.Params.Text("rate"))
	}
	return j.validate(t)
}

// jitterTotal is the part of jitter's total record analysis reads.
type jitterTotal struct {
	Bytes      int64   `json:"bytes"`
	BPS        float64 `json:"bps"`
	LossPct    float64 `json:"loss_pct"`
	OutOfOrder int64   `json:"out_of_order"`
	JitterMS   float64 `json:"jitter_ms"`
}

func (jitter) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[jitterTotal](payload)
	if err != nil {
		return workload.Total{}, err
	}
	v := map[string]float64{"jitter": r.JitterMS, "loss": r.LossPct, "out_of_order": float64(r.OutOfOrder), "throughput": r.BPS / 1e6}
	return workload.Total{Values: v, Moved: r.Bytes}, nil
}

type datagram struct{ listener }

func (datagram) Name() string     { return DatagramName }
func (datagram) Headline() string { return "mb_per_s" }

func (datagram) Metrics() []workload.Metric {
	return []workload.Metric{
		{Key: "out_of_order", Title: "Out of order", Unit: "datagrams", Short: "out of order", Additive: true, Count: true},
		{Key: "mb_per_s", Title: "Throughput", Unit: "MB/s", HigherIsBetter: true, Short: "MB/s", Additive: true},
		{Key: "packets_per_s", Title: "Packets", Unit: "1/s", HigherIsBetter: true, Short: "packets/s", Additive: true},
		{Key: "success", Title: "Success rate", Unit: "%", HigherIsBetter: true, Short: "success %"},
		{Key: "avg_offset", Title: "Average offset", Unit: "packets", Short: "avg offset"},
	}
}

func (datagram) Params() []workload.Param {
	return []workload.Param{
		udpLength("--size", "", "0", "packet size (UDP payload bytes); 0: the route's MTU − 32 (1468 on 1500), else 1468"),
		{Name: "rate", Kind: workload.Rate, Unit: "bits/s", Flag: "--rate", Default: "0", Sweep: true,
			Help: "rate limit in bits/s (k, M, G: powers of 1000); 0: as fast as possible"},
		{Name: "count", Kind: workload.Whole, Unit: "packets", Bounds: []workload.Bound{{Max: DatagramMaxCount}},
			Flag: "--count", Help: "packets to send (0: until --time)"},
	}
}

func (d datagram) Validate(t workload.Test) error { return d.validate(t) }

// datagramTotal is the part of datagram's total record analysis reads.
type datagramTotal struct {
	Bytes       int64   `json:"bytes"`
	MBPerS      float64 `json:"mb_per_s"`
	PacketsPerS float64 `json:"packets_per_s"`
	SuccessRate float64 `json:"success_rate"`
	OutOfOrder  int64   `json:"out_of_order"`
	AvgOffset   float64 `json:"avg_offset"`
}

func (datagram) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[datagramTotal](payload)
	if err != nil {
		return workload.Total{}, err
	}
	v := map[string]float64{"mb_per_s": r.MBPerS, "packets_per_s": r.PacketsPerS, "success": r.SuccessRate * 100,
		"out_of_order": float64(r.OutOfOrder), "avg_offset": r.AvgOffset}
	return workload.Total{Values: v, Moved: r.Bytes}, nil
}
