package suite

import (
	"encoding/json"
	"fmt"

	"github.com/cnperf/cnperf/internal/container"
)

// Record is one line a test's client printed, as the runner stores it in
// samples.jsonl: the line itself in Data, untouched, wrapped with where and
// what it measured.
type Record struct {
	Workload string            `json:"workload"` // stream, rr, jitter, datagram
	Kind     string            `json:"kind"`     // "interval" or "total"
	Mode     string            `json:"mode"`
	Labels   map[string]string `json:"labels,omitempty"`
	Cell     int               `json:"cell"`
	Case     string            `json:"case"` // Case.Label
	Test     int               `json:"test"` // index in the spec's tests
	Param    string            `json:"param,omitempty"`
	Value    string            `json:"value,omitempty"`
	Rep      int               `json:"rep"`
	Data     json.RawMessage   `json:"data"`
}

// Wrap turns one JSON line of a client into a Record of case c.
func Wrap(c Case, line []byte) (Record, error) {
	var probe struct {
		Workload string   `json:"workload"`
		Type     string   `json:"type"`
		Total    bool     `json:"total"`
		Duration *float64 `json:"duration_s"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return Record{}, fmt.Errorf("client printed a line that is not JSON: %q", truncate(line))
	}
	if probe.Workload != c.Test.Workload {
		return Record{}, fmt.Errorf("client printed a %q record in a %s test", probe.Workload, c.Test.Workload)
	}
	kind := "interval"
	switch {
	case probe.Workload == "stream" && probe.Duration != nil, probe.Type == "result", probe.Total:
		kind = "total"
	}
	return Record{Workload: c.Test.Workload, Kind: kind, Case: c.Label, Test: c.Index, Param: c.Param, Value: c.Value,
		Data: append(json.RawMessage(nil), line...)}, nil
}

// Cost is what one cell cost: the client's process and the delta of the
// server's over the cell, from their cgroups (or /proc), stored as a
// "cost" line after the cell's records.
type Cost struct {
	Workload string            `json:"workload"` // "cost"
	Test     string            `json:"test_workload"`
	Mode     string            `json:"mode"`
	Labels   map[string]string `json:"labels,omitempty"`
	Cell     int               `json:"cell"`
	Case     string            `json:"case"`
	Rep      int               `json:"rep"`
	Seconds  float64           `json:"seconds"` // the cell's wall time
	Client   container.Usage   `json:"client"`
	Server   container.Usage   `json:"server"` // CPU over the cell; memory: the server's peak so far
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// MovedBytes is the payload a test's total record says it moved (stream:
// received bytes; rr: transactions × (request + response); jitter and
// datagram: received bytes), for CPU seconds per GB.
func MovedBytes(total json.RawMessage) int64 {
	var t struct {
		ReceiverBytes int64 `json:"receiver_bytes"`
		Transactions  int64 `json:"transactions"`
		Request       int64 `json:"request_size"`
		Response      int64 `json:"response_size"`
		Bytes         int64 `json:"bytes"`
	}
	if json.Unmarshal(total, &t) != nil {
		return 0
	}
	return t.ReceiverBytes + t.Transactions*(t.Request+t.Response) + t.Bytes
}
