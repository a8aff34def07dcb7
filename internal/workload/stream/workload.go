package stream

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
)

// Descriptor is the stream workload as the registry lists it.
var Descriptor workload.Socket = descriptor{}

type descriptor struct{}

func (descriptor) Name() string     { return WorkloadName }
func (descriptor) Headline() string { return "throughput" }

func (descriptor) Metrics() []workload.Metric {
	return []workload.Metric{
		{Key: "throughput", Title: "Throughput", Unit: "Mbit/s", HigherIsBetter: true, Short: "Mbit/s", Additive: true},
		{Key: "retransmits", Title: "TCP retransmits", Unit: "segments", Short: "retrans", Additive: true, Count: true},
		{Key: "loss", Title: "Loss", Unit: "%", Short: "loss %"},
		{Key: "out_of_order", Title: "Out of order", Unit: "datagrams", Short: "out of order", Additive: true, Count: true},
	}
}

// Server serves one test at a time, as iperf3 -s. A runner that points
// several clients at one server (fan-out) appends "--tests", N to Args.
func (descriptor) Server() workload.Server {
	return workload.Server{Role: "stream-server", Port: DefaultPort, Protocols: []string{"tcp", "udp"},
		Args: []string{"serve", "stream", "--listen", fmt.Sprintf(":%d", DefaultPort)}, Concurrent: "--tests"}
}

func (descriptor) Params() []string {
	return []string{"protocol", "omit", "parallel", "length", "rate", "copy"}
}
func (descriptor) Sweepable() []string { return []string{"length", "parallel", "rate"} }
func (descriptor) Protocols() []string { return []string{"tcp", "udp"} }

func (descriptor) Flags() map[string]string {
	return map[string]string{"--protocol": "protocol", "--udp": "protocol", "--time": "duration", "--omit": "omit",
		"--interval": "interval", "--parallel": "parallel", "--bitrate": "rate", "--length": "length", "--copy": "copy"}
}

func (descriptor) Check(t workload.Test, rate int64) error {
	if err := workload.Between("parallel", t.Parallel, 1, MaxParallel, true); err != nil {
		return err
	}
	lo, hi, what := 1, MaxTCPLength, "TCP write"
	if t.Protocol == "udp" {
		lo, hi, what = udpHeaderLen, MaxUDPLength, "UDP datagram"
	}
	if err := workload.Size("length", t.Length, lo, hi, what); err != nil {
		return err
	}
	if t.Copy && (t.Protocol == "udp" || (rate != 0 && rate < UnlimitedRate)) {
		return workload.Bad("copy", "only for TCP as fast as possible (no rate): the one test sent with sendfile")
	}
	// The client's own rules too, so that one added there is never missed.
	return Config{Addr: "198.18.0.1", Protocol: t.Protocol, Duration: t.RunTime(), Omit: t.Omit,
		Interval: t.ReportInterval(), Parallel: t.Parallel, Length: t.Length, Rate: rate, Copy: t.Copy}.Validate()
}

func (descriptor) ClientFlags(t workload.Test) []string {
	var a []string
	if t.Protocol == "udp" {
		a = append(a, "--udp")
	}
	if t.Omit != 0 {
		a = append(a, "--omit", t.Omit.String())
	}
	if t.Parallel != 0 {
		a = append(a, "--parallel", fmt.Sprint(t.Parallel))
	}
	if t.Length != 0 {
		a = append(a, "--length", fmt.Sprint(t.Length))
	}
	if t.Rate != "" {
		a = append(a, "--bitrate", t.Rate)
	}
	if t.Copy {
		a = append(a, "--copy")
	}
	return a
}

func (descriptor) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[Result](payload)
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

func (descriptor) ClientCommand(c workload.Console) *cobra.Command { return clientCommand(c) }
func (descriptor) ServeCommand(c workload.Console) *cobra.Command  { return serveCommand(c) }

// ParamTitle: over TCP, length is the size of each write; over UDP, a
// datagram's, as for every other workload.
func (descriptor) ParamTitle(param, protocol string) string {
	if param == "length" && protocol != "udp" {
		return "Write size (bytes)"
	}
	return ""
}
