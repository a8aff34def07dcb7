// Package grid is the 2017 Coherence thesis's application-level workload: a client joins a
// data grid (Olric, embedded in cnperf) whose one storage member runs in
// the server's container, and for the test's duration removes the
// previous key and puts a 700-character value under a new key. It counts
// successful puts and failures and keeps each operation's time.
package grid

import (
	"encoding/json"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
)

const name = "grid"

// DefaultPort is the storage member's port; its gossip is on the next.
const DefaultPort = 5204

// Descriptor is the grid workload as the registry lists it.
var Descriptor workload.Socket = descriptor{}

type descriptor struct{}

func (descriptor) Name() string     { return name }
func (descriptor) Headline() string { return "puts_per_s" }

func (descriptor) Metrics() []workload.Metric {
	return []workload.Metric{
		{Key: "puts_per_s", Title: "Puts", Unit: "1/s", HigherIsBetter: true, Short: "puts/s", Additive: true},
		{Key: "puts", Title: "Successful puts", Unit: "count", HigherIsBetter: true, Short: "puts", Additive: true},
		{Key: "grid_failures", Title: "Failed operations", Unit: "count", Short: "failed", Additive: true, Count: true},
		{Key: "put_p50", Title: "Put, median", Unit: "µs", Short: "put p50 µs"},
		{Key: "put_p99", Title: "Put, 99th pct", Unit: "µs", Short: "put p99 µs"},
	}
}

// Server is one storage member: the grid's port over TCP, gossip on the
// next port over TCP and UDP (published too, so a member on another host
// could join).
func (descriptor) Server() workload.Server {
	g := GossipPort(DefaultPort)
	return workload.Server{Role: "grid-server", Port: DefaultPort, Protocols: []string{"tcp"},
		Args: []string{"serve", "grid", "--listen", ":" + strconv.Itoa(DefaultPort)},
		More: []workload.Port{{Number: g, Protocol: "tcp"}, {Number: g, Protocol: "udp"}}}
}

func (descriptor) Params() []string    { return []string{"length", "timeout"} }
func (descriptor) Sweepable() []string { return []string{"length"} }
func (descriptor) Protocols() []string { return nil }

func (descriptor) Flags() map[string]string {
	return map[string]string{"--time": "duration", "--interval": "interval", "--value-size": "length", "--timeout": "timeout"}
}

func (descriptor) Check(t workload.Test, _ int64) error {
	if err := workload.Size("length", t.Length, 1, MaxValueSize, "grid value"); err != nil {
		return err
	}
	return Config{Addr: "198.18.0.1:1", Duration: t.RunTime(), Interval: t.ReportInterval(), ValueSize: max(t.Length, 1),
		Timeout: t.Timeout}.Validate()
}

func (descriptor) ClientFlags(t workload.Test) []string {
	var a []string
	if t.Length != 0 {
		a = append(a, "--value-size", strconv.Itoa(t.Length))
	}
	if t.Timeout != 0 {
		a = append(a, "--timeout", t.Timeout.String())
	}
	return a
}

func (descriptor) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[Result](payload)
	if err != nil {
		return workload.Total{}, err
	}
	v := map[string]float64{"puts_per_s": r.PutsPerSec, "puts": float64(r.Puts), "grid_failures": float64(r.Failures()),
		"put_p50": r.Put.P50, "put_p99": r.Put.P99}
	return workload.Total{Protocol: "tcp", Values: v, Moved: r.Puts * int64(r.ValueSize)}, nil
}

func (descriptor) ClientCommand(c workload.Console) *cobra.Command { return clientCommand(c) }
func (descriptor) ServeCommand(c workload.Console) *cobra.Command  { return serveCommand(c) }
