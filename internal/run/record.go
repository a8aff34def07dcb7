package run

import (
	"encoding/json"
	"fmt"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload"
)

// Wrap turns one JSON line of a client into a Record of case c.
func wrapLine(c workload.Case, line []byte) (record.Record, error) {
	var probe struct {
		Workload string   `json:"workload"`
		Type     string   `json:"type"`
		Total    bool     `json:"total"`
		Duration *float64 `json:"duration_s"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return record.Record{}, fmt.Errorf("client printed a line that is not JSON: %q", truncate(line))
	}
	if probe.Workload != c.Test.Workload {
		return record.Record{}, fmt.Errorf("client printed a %q record in a %s test", probe.Workload, c.Test.Workload)
	}
	kind := "interval"
	switch {
	case probe.Workload == "stream" && probe.Duration != nil, probe.Type == "result", probe.Total:
		kind = "total"
	}
	return record.Record{Workload: c.Test.Workload, Kind: kind, Case: c.Label, Test: c.Index, Param: c.Param, Value: c.Value,
		Data: append(json.RawMessage(nil), line...)}, nil
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}
