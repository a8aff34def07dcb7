package udp

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
)

// JitterDescriptor and DatagramDescriptor are the two workloads as the registry lists them.
// They share the listener, `cnperf serve udp`.
var (
	JitterDescriptor   workload.Socket = jitter{}
	DatagramDescriptor workload.Socket = datagram{}
)

// listener is what both workloads share: the server and its command.
type listener struct{}

// Server serves one test at a time. A runner that points several clients
// at one listener (fan-out) appends "--tests", N to Args.
func (listener) Server() workload.Server {
	return workload.Server{Role: "udp-server", Port: DefaultPort, Protocols: []string{"tcp", "udp"}, // tcp: control
		Args: []string{"serve", "udp", "--listen", fmt.Sprintf(":%d", DefaultPort)}, Concurrent: "--tests"}
}

func (listener) ServeCommand(c workload.Console) *cobra.Command { return serveCommand(c) }
func (listener) Protocols() []string                            { return nil }

type jitter struct{ listener }

func (jitter) Name() string     { return WorkloadJitter }
func (jitter) Headline() string { return "jitter" }

func (jitter) Metrics() []workload.Metric {
	return []workload.Metric{
		{Key: "throughput", Title: "Throughput", Unit: "Mbit/s", HigherIsBetter: true, Short: "Mbit/s", Additive: true},
		{Key: "loss", Title: "Loss", Unit: "%", Short: "loss %"},
		{Key: "out_of_order", Title: "Out of order", Unit: "datagrams", Short: "out of order", Additive: true, Count: true},
		{Key: "jitter", Title: "Jitter (RFC 3550)", Unit: "ms", Short: "jitter ms"},
	}
}

func (jitter) Params() []string    { return []string{"length", "rate"} }
func (jitter) Sweepable() []string { return []string{"length", "rate"} }

func (jitter) Flags() map[string]string {
	return map[string]string{"--time": "duration", "--interval": "interval", "--bitrate": "rate", "--length": "length"}
}

func (jitter) Check(t workload.Test, rate int64) error {
	if t.Rate != "" && rate == 0 {
		return workload.Bad("rate", "%q: jitter needs a rate > 0", t.Rate)
	}
	if err := workload.Size("length", t.Length, HeaderSize, MaxSize, "UDP datagram"); err != nil {
		return err
	}
	size, r := t.Length, rate
	if size == 0 {
		size = DefaultJitterSize
	}
	if r == 0 {
		r = DefaultJitterRate
	}
	// The client's own rules too, so that one added there is never missed.
	return JitterConfig{Addr: "198.18.0.1", Rate: r, Size: size, Duration: t.RunTime(), Interval: t.ReportInterval()}.Validate()
}

func (jitter) ClientFlags(t workload.Test) []string {
	var a []string
	if t.Length != 0 {
		a = append(a, "--length", fmt.Sprint(t.Length))
	}
	if t.Rate != "" {
		a = append(a, "--bitrate", t.Rate)
	}
	return a
}

func (jitter) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[JitterRecord](payload)
	if err != nil {
		return workload.Total{}, err
	}
	v := map[string]float64{"jitter": r.JitterMS, "loss": r.LossPct, "out_of_order": float64(r.OutOfOrder), "throughput": r.BPS / 1e6}
	return workload.Total{Values: v, Moved: r.Bytes}, nil
}

func (jitter) ClientCommand(c workload.Console) *cobra.Command { return jitterCommand(c) }

type datagram struct{ listener }

func (datagram) Name() string     { return WorkloadDatagram }
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

func (datagram) Params() []string    { return []string{"length", "rate", "count"} }
func (datagram) Sweepable() []string { return []string{"length", "rate"} }

func (datagram) Flags() map[string]string {
	return map[string]string{"--time": "duration", "--interval": "interval", "--rate": "rate", "--size": "length",
		"--count": "count"}
}

func (datagram) Check(t workload.Test, rate int64) error {
	if err := workload.Size("length", t.Length, HeaderSize, MaxSize, "UDP datagram"); err != nil {
		return err
	}
	// The client's own rules too, so that one added there is never missed.
	return DatagramConfig{Addr: "198.18.0.1", Size: t.Length, Rate: rate, Count: t.Count, Duration: t.RunTime(),
		Interval: t.ReportInterval()}.Validate()
}

func (datagram) ClientFlags(t workload.Test) []string {
	var a []string
	if t.Length != 0 {
		a = append(a, "--size", fmt.Sprint(t.Length))
	}
	if t.Rate != "" {
		a = append(a, "--rate", t.Rate)
	}
	if t.Count != 0 {
		a = append(a, "--count", fmt.Sprint(t.Count))
	}
	return a
}

func (datagram) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[DatagramRecord](payload)
	if err != nil {
		return workload.Total{}, err
	}
	v := map[string]float64{"mb_per_s": r.MBPerS, "packets_per_s": r.PacketsPerS, "success": r.SuccessRate * 100,
		"out_of_order": float64(r.OutOfOrder), "avg_offset": r.AvgOffset}
	return workload.Total{Values: v, Moved: r.Bytes}, nil
}

func (datagram) ClientCommand(c workload.Console) *cobra.Command { return datagramCommand(c) }
