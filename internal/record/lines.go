package record

// The kinds of line samples.jsonl holds, each naming its workload and
// cell: ping-pong's per-request samples (Sample), the lines other tests'
// clients print (Record), each cell's cost (Cost) and the machine's CPU
// (CPUSample). Reader.Contents reads them all.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

// Record is one line a test's client printed, as the runner stores it in
// samples.jsonl: the line itself in Data, untouched, wrapped with where and
// what it measured. Lines of runs before the workload envelope are the
// workload's bare record (no "kind" in Data); analysis reads both alike.
type Record struct {
	Workload string            `json:"workload"` // stream, rr, jitter, datagram
	Kind     string            `json:"kind"`     // "start", "interval" or KindTotal
	Mode     string            `json:"mode"`
	Labels   map[string]string `json:"labels,omitempty"`
	Cell     int               `json:"cell"`
	Case     string            `json:"case"` // Case.Label
	Test     int               `json:"test"` // index in the spec's tests
	Param    string            `json:"param,omitempty"`
	Value    string            `json:"value,omitempty"`
	Rep      int               `json:"rep"`
	// A fan-out test (several clients at once) names which client printed
	// the line: its container's role, its process in that container (from
	// 0) and the server container it ran against. Empty for one client.
	Client  string          `json:"client,omitempty"`
	Process int             `json:"process,omitempty"`
	Server  string          `json:"server,omitempty"`
	Data    json.RawMessage `json:"data"`
}

// KindLoad is the kind of every line the load beside a test printed (an
// rr probe's stream under under_load): its Workload is the load's, its
// Data the load client's line whole with its own kind. Readers of a
// test's records (start, interval, total) pass over it.
const KindLoad = "load"

// KindTotal is the kind of a test's total record, the one analysis reads
// (the client's "end" line).
const KindTotal = "total"

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
	Client   Usage             `json:"client"`
	Server   Usage             `json:"server"` // CPU over the cell; memory: the server's peak so far
}

// Wrap turns one envelope line a client printed into a Record of case c,
// the line kept whole as its Data; the runner adds mode, cell and
// repetition. An end line is stored as KindTotal, the word runs have
// always stored.
func Wrap(c workload.Case, line []byte) (Record, error) {
	env, err := workload.Decode(line)
	if err != nil {
		return Record{}, fmt.Errorf("client printed a line that is not a JSON envelope (%v): %q", err, truncate(line))
	}
	if env.Workload != c.Test.Workload {
		return Record{}, fmt.Errorf("client printed a %q record in a %s test", env.Workload, c.Test.Workload)
	}
	kind := env.Kind
	if kind == workload.KindEnd {
		kind = KindTotal
	}
	return Record{Workload: c.Test.Workload, Kind: kind, Case: c.Label, Test: c.Index, Param: c.Param, Value: c.Value,
		Data: append([]byte(nil), line...)}, nil
}

// WrapLoad turns one envelope line of the load beside case c (load, from
// Case.LoadCase) into a KindLoad Record filed under c.
func WrapLoad(c, load workload.Case, line []byte) (Record, error) {
	env, err := workload.Decode(line)
	if err != nil {
		return Record{}, fmt.Errorf("load client printed a line that is not a JSON envelope (%v): %q", err, truncate(line))
	}
	if env.Workload != load.Test.Workload {
		return Record{}, fmt.Errorf("load client printed a %q record, not %s", env.Workload, load.Test.Workload)
	}
	return Record{Workload: load.Test.Workload, Kind: KindLoad, Case: c.Label, Test: c.Index, Param: c.Param, Value: c.Value,
		Data: append([]byte(nil), line...)}, nil
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// Sample is one ping-pong request as siege saw it (Kratzke's HTTP
// ping-pong: siege → ping → pong, a message of Size bytes), stored as one
// line of samples.jsonl. Siege fills the measured fields; the runner adds
// Mode, Labels and Cell before storing it. It is the one kind of record
// that is stored per request rather than as a client's envelope line
// (Record): runs have always stored it so, and analysis reads it so.
type Sample struct {
	Workload   string            `json:"workload"` // the size sweep's (pingpong)
	Mode       string            `json:"mode,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Cell       int               `json:"cell"`        // index of the interleaved cell that produced it
	Size       int               `json:"size"`        // requested message size in bytes
	Rep        int               `json:"rep"`         // repetition index of this size, from 0
	DurationMS float64           `json:"duration_ms"` // inner ping→pong time reported by ping (ms)
	LatencyMS  float64           `json:"latency_ms"`  // outer siege→ping→siege time (ms)
	Length     int               `json:"length"`      // body bytes ping received from pong
	Code       int               `json:"code"`        // pong's status as ping reports it (503: ping gave up)
	Retries    int               `json:"retries"`     // ping's retries towards pong
	Time       time.Time         `json:"ts"`          // when siege sent the request
	Error      string            `json:"error,omitempty"`
}

// OK reports whether the sample is a successful exchange with a whole
// body (pingpong.LengthOK: for sizes below 4 the original pong answers
// "pong").
func (s Sample) OK() bool {
	return s.Error == "" && s.Code == 200 && pingpong.LengthOK(s.Size, s.Length)
}

// TransferRate is the inner transfer rate in bytes per second, as ppbench
// computes it (length / duration); 0 when the sample carries no duration.
func (s Sample) TransferRate() float64 {
	if s.DurationMS <= 0 {
		return 0
	}
	return float64(s.Length) * 1000 / s.DurationMS
}

// CPUSample is the machine's CPU over one interval.
type CPUSample struct {
	Workload  string    `json:"workload"` // "cpu"
	Mode      string    `json:"mode,omitempty"`
	Time      time.Time `json:"ts"` // end of the interval
	Seconds   float64   `json:"seconds"`
	All       float64   `json:"busy_percent"`       // all cores
	Cores     []float64 `json:"core_busy_percent"`  // per core
	Committed int64     `json:"committed_as_bytes"` // Committed_AS at the end
}
