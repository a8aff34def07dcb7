package descriptors

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

// The stream workload's name, port and bounds.
const (
	StreamName         = "stream"
	StreamPort         = 5201
	StreamMaxParallel  = 128
	StreamMaxTCPLength = 16 << 20
	StreamUDPHeader    = 24 // seq (8) + send time (8) + test id (4) + stream (4)
	// StreamMaxIntervals bounds the bins a test is recorded in:
	// (omit + time) / interval.
	StreamMaxIntervals = 100_000
	// StreamUnlimitedRate is a rate that no path reaches: send as fast as
	// possible.
	StreamUnlimitedRate = int64(1) << 62
)

// Stream is TCP or UDP bulk throughput, as iperf3.
var Stream workload.Socket = stream{}

type stream struct{}

func (stream) Name() string                        { return StreamName }
func (stream) Headline() string                    { return "throughput" }
func (stream) Capabilities() []workload.Capability { return nil }

func (stream) Metrics() []workload.Metric {
	return []workload.Metric{
		{Key: "throughput", Title: "Throughput", Unit: "Mbit/s", HigherIsBetter: true, Short: "Mbit/s", Additive: true},
		{Key: "retransmits", Title: "TCP retransmits", Unit: "segments", Short: "retrans", Additive: true, Count: true},
		{Key: "loss", Title: "Loss", Unit: "%", Short: "loss %"},
		{Key: "out_of_order", Title: "Out of order", Unit: "datagrams", Short: "out of order", Additive: true, Count: true},
	}
}

// Server serves one test at a time, as iperf3 -s. A runner that points
// several clients at one server (fan-out) appends "--tests", N to Args.
func (stream) Server() workload.Server {
	return workload.Server{Role: "stream-server", Port: StreamPort, Protocols: []string{"tcp", "udp"},
		Args: []string{"serve", "stream", "--listen", fmt.Sprintf(":%d", StreamPort)}, Concurrent: "--tests"}
}

func (stream) Params() []workload.Param {
	return []workload.Param{
		{Name: "protocol", Kind: workload.Choice, Choices: []string{"tcp", "udp"}, Flag: "--udp", Short: "u",
			FlagSets: "udp", Help: "UDP instead of TCP"},
		omit(),
		{Name: "parallel", Kind: workload.Whole, Unit: "streams", Bounds: []workload.Bound{{Min: 1, Max: StreamMaxParallel}},
			Flag: "--parallel", Short: "P", Default: "1", Sweep: true, Help: "parallel streams"},
		{Name: "threads", Kind: workload.Whole, Unit: "threads", Bounds: []workload.Bound{{Min: 1, Max: StreamMaxParallel}},
			Flag: "--threads", Sweep: true,
			Help: "OS threads the streams are sent and received with, each a loop over its share (TCP as fast as possible; default: one per stream up to the CPUs)"},
		{Name: "length", Kind: workload.Whole, Unit: "bytes", Bounds: []workload.Bound{
			{Protocol: "udp", Min: StreamUDPHeader, Max: MaxUDPPayload, What: "UDP datagram"},
			{Min: 1, Max: StreamMaxTCPLength, What: "TCP write"}},
			Flag: "--length", Short: "l", Sweep: true,
			Help: "TCP write size or UDP datagram payload (default 128K for TCP, 1470 for UDP)"},
		{Name: "rate", Kind: workload.Rate, Unit: "bits/s", Flag: "--bitrate", Short: "b", Sweep: true,
			Help: "target bit rate per stream, e.g. 100M or 10G (default unlimited for TCP, 1M for UDP; 0: unlimited)"},
		{Name: "copy", Kind: workload.Switch, Flag: "--copy",
			Help: "TCP as fast as possible: write each block from user memory, as iperf3 without -Z, not sendfile(2) from a file"},
	}
}

func (stream) Validate(t workload.Test) error {
	p := t.Params
	rate := p.Bits("rate")
	if p.Bool("copy") && (p.Text("protocol") == "udp" || (rate != 0 && rate < StreamUnlimitedRate)) {
		return workload.Bad("copy", "only for TCP as fast as possible (no rate): the one test sent with sendfile")
	}
	if n := p.Int("threads"); n > 0 {
		if par := max(p.Int("parallel"), 1); n > par {
			return workload.Bad("threads", "%d: more than the %d parallel stream(s)", n, par)
		}
		if n > 1 && (p.Text("protocol") == "udp" || (rate != 0 && rate < StreamUnlimitedRate)) {
			return workload.Bad("threads", "only for TCP as fast as possible (no rate): paced and UDP streams each have a thread of their own")
		}
	}
	// The bins the client records the test in.
	iv := t.ReportInterval()
	ceil := func(d time.Duration) int64 { return int64((d + iv - 1) / iv) }
	if n := ceil(p.Dur("omit")) + ceil(t.RunTime()); n > StreamMaxIntervals {
		return workload.Bad("interval", "%s: %d intervals in %s, more than %d", iv, n, p.Dur("omit")+t.RunTime(), StreamMaxIntervals)
	}
	return nil
}

// streamTotal is the part of stream's total record analysis reads.
type streamTotal struct {
	Protocol              string  `json:"protocol"`
	ReceiverBytes         int64   `json:"receiver_bytes"`
	ReceiverBitsPerSecond float64 `json:"receiver_bits_per_second"`
	Retransmits           int64   `json:"retransmits"`
	LossPercent           float64 `json:"loss_percent"`
	OutOfOrder            int64   `json:"out_of_order"`
}

func (stream) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[streamTotal](payload)
	if err != nil {
		return workload.Total{}, err
	}
	v := map[string]float64{"throughput": r.ReceiverBitsPerSecond / 1e6}
	if r.Protocol == "udp" {
		v["loss"] = r.LossPercent
		v["out_of_order"] = float64(r.OutOfOrder)
	} else {
		v["retransmits"] = float64(r.Retransmits)
	}
	return workload.Total{Protocol: r.Protocol, Values: v, Moved: r.ReceiverBytes}, nil
}

// ParamTitle: over TCP, length is the size of each write; over UDP, a
// datagram's, as for every other workload.
func (stream) ParamTitle(param, protocol string) string {
	if param == "length" && protocol != "udp" {
		return "Write size (bytes)"
	}
	return ""
}
