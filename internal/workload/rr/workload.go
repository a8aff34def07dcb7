package rr

import (
	"encoding/json"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/udp"
)

// Descriptor is the rr workload as the registry lists it.
var Descriptor workload.Socket = descriptor{}

type descriptor struct{}

func (descriptor) Name() string     { return "rr" }
func (descriptor) Headline() string { return "trans_per_s" }

func (descriptor) Metrics() []workload.Metric {
	return []workload.Metric{
		{Key: "trans_per_s", Title: "Transactions", Unit: "1/s", HigherIsBetter: true, Short: "trans/s", Additive: true},
		{Key: "rtt_p50", Title: "Round trip, median", Unit: "µs", Short: "RTT p50 µs"},
		{Key: "rtt_p99", Title: "Round trip, 99th pct", Unit: "µs", Short: "RTT p99 µs"},
		{Key: "one_way_p50", Title: "One way (round trip / 2), median", Unit: "µs", Short: "1-way p50 µs (RTT/2)"},
		{Key: "rr_lost", Title: "Lost transactions", Unit: "count", Short: "lost", Additive: true, Count: true},
	}
}

func (descriptor) Server() workload.Server {
	p, _ := strconv.Atoi(DefaultPort)
	return workload.Server{Role: "rr-server", Port: p, Protocols: []string{"tcp", "udp"},
		Args: []string{"serve", "rr", "--listen", ":" + DefaultPort}}
}

func (descriptor) Params() []string {
	return []string{"protocol", "omit", "parallel", "request", "response", "timeout", "fit_mtu", "busy_poll"}
}
func (descriptor) Sweepable() []string { return []string{"request", "response", "parallel"} }
func (descriptor) Protocols() []string { return []string{ModeTCP, ModeUDP, ModeCRR} }

func (descriptor) Flags() map[string]string {
	return map[string]string{"--mode": "protocol", "--time": "duration", "--omit": "omit", "--interval": "interval",
		"--parallel": "parallel", "--request": "request", "--response": "response", "--timeout": "timeout", "--busy-poll": "busy_poll"}
}

func (descriptor) Check(t workload.Test, _ int64) error {
	if err := workload.Between("parallel", t.Parallel, 1, MaxParallel, true); err != nil {
		return err
	}
	overUDP := t.Protocol == ModeUDP
	hi, what := MaxTCPSize, "rr message over TCP"
	if overUDP {
		hi, what = MaxUDPSize, "UDP datagram"
	}
	if err := workload.Size("request", t.Request, 1, hi, what); err != nil {
		return err
	}
	if err := workload.Size("response", t.Response, 1, hi, what); err != nil {
		return err
	}
	req, resp := max(t.Request, 1), max(t.Response, 1)
	if overUDP && req < 4 && resp != req {
		return workload.Bad("response", "%d: a UDP request under 4 bytes cannot carry the response size; use request >= 4 or response %d", resp, req)
	}
	if t.BusyPoll {
		if t.Protocol == ModeCRR {
			return workload.Bad("busy_poll", "for protocol tcp and udp; crr blocks in connect once per transaction")
		}
		if err := busyPollCPUs(max(t.Parallel, 1)); err != nil {
			return workload.Bad("busy_poll", "%v", err)
		}
	}
	// The client's own rules too, so that one added there is never missed.
	return Config{Addr: "198.18.0.1", Mode: t.Protocol, Duration: t.RunTime(), Omit: t.Omit, Interval: t.ReportInterval(),
		RequestSize: t.Request, ResponseSize: t.Response, Parallel: t.Parallel, Timeout: t.Timeout}.Validate()
}

// FitTo sets request and response to the packet size of the path (its MTU
// − 32, as the datagram workload's default), so that none fragments.
func (descriptor) FitTo(t workload.Test, mtu int) workload.Test {
	size := udp.DefaultPacketSize(mtu)
	t.Request, t.Response = size, size
	return t
}

func (descriptor) ClientFlags(t workload.Test) []string {
	var a []string
	add := func(flag string, v string, set bool) {
		if set {
			a = append(a, flag, v)
		}
	}
	add("--mode", t.Protocol, t.Protocol != "")
	add("--omit", t.Omit.String(), t.Omit != 0)
	add("--parallel", strconv.Itoa(t.Parallel), t.Parallel != 0)
	add("--request", strconv.Itoa(t.Request), t.Request != 0)
	add("--response", strconv.Itoa(t.Response), t.Response != 0)
	add("--timeout", t.Timeout.String(), t.Timeout != 0)
	if t.BusyPoll {
		a = append(a, "--busy-poll")
	}
	return a
}

func (descriptor) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[Result](payload)
	if err != nil {
		return workload.Total{}, err
	}
	v := map[string]float64{"trans_per_s": r.TransPerSec, "rtt_p50": r.RoundTrip.P50, "rtt_p99": r.RoundTrip.P99,
		"one_way_p50": r.OneWay.P50}
	if r.Mode == ModeUDP {
		v["rr_lost"] = float64(r.Lost)
	}
	moved := r.Transactions * int64(r.RequestSize+r.ResponseSize)
	return workload.Total{Protocol: r.Mode, Values: v, Moved: moved}, nil
}

func (descriptor) ClientCommand(c workload.Console) *cobra.Command { return clientCommand(c) }
func (descriptor) ServeCommand(c workload.Console) *cobra.Command  { return serveCommand(c) }
