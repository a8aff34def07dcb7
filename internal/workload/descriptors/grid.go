package descriptors

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

// The grid workload's name, port and bounds.
const (
	GridName = "grid"
	// GridPort is the storage member's port; its gossip is on the next.
	GridPort         = 5204
	GridMaxValueSize = 1 << 20 // 1 MiB: far above the 2017 Coherence thesis's 700 characters
	GridMaxTimeout   = time.Minute
)

// Grid is the 2017 Coherence thesis's application-level workload: a
// client of a data grid removes the previous key and puts a value under a
// new one, for the test's duration.
var Grid workload.Socket = grid{}

type grid struct{}

func (grid) Name() string                        { return GridName }
func (grid) Headline() string                    { return "puts_per_s" }
func (grid) Capabilities() []workload.Capability { return nil }

func (grid) Metrics() []workload.Metric {
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
func (grid) Server() workload.Server {
	g := GridPort + 1
	return workload.Server{Role: "grid-server", Port: GridPort, Protocols: []string{"tcp"},
		Args: []string{"serve", "grid", "--listen", ":" + strconv.Itoa(GridPort)},
		More: []workload.Port{{Number: g, Protocol: "tcp"}, {Number: g, Protocol: "udp"}}}
}

func (grid) Params() []workload.Param {
	return []workload.Param{
		{Name: "length", Kind: workload.Whole, Unit: "characters",
			Bounds: []workload.Bound{{Min: 1, Max: GridMaxValueSize, What: "grid value"}},
			Flag:   "--value-size", Default: "700", Sweep: true, Help: "characters of each value"},
		{Name: "timeout", Kind: workload.Duration, Bounds: []workload.Bound{{Max: int64(GridMaxTimeout)}}, Default: "0s",
			Flag: "--timeout", Help: "bound on one operation (default 5s)"},
	}
}

func (grid) Validate(workload.Test) error { return nil }

// gridTotal is the part of grid's total record analysis reads.
type gridTotal struct {
	ValueSize      int     `json:"value_size"`
	Puts           int64   `json:"puts"`
	PutFailures    int64   `json:"put_failures"`
	RemoveFailures int64   `json:"remove_failures"`
	PutsPerSec     float64 `json:"puts_per_s"`
	Put            struct {
		P50 float64 `json:"p50_us"`
		P99 float64 `json:"p99_us"`
	} `json:"put"`
}

func (grid) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[gridTotal](payload)
	if err != nil {
		return workload.Total{}, err
	}
	v := map[string]float64{"puts_per_s": r.PutsPerSec, "puts": float64(r.Puts), "grid_failures": float64(r.PutFailures + r.RemoveFailures),
		"put_p50": r.Put.P50, "put_p99": r.Put.P99}
	return workload.Total{Protocol: "tcp", Values: v, Moved: r.Puts * int64(r.ValueSize)}, nil
}
