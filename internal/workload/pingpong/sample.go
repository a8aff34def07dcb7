// Package pingpong implements Kratzke's HTTP ping-pong benchmark
// (github.com/nkratzke/pingpong, ppbench): the pong and ping servers, the
// size plan and the siege load generator.
package pingpong

import "time"

// Sample is one /mping request as siege saw it. Siege fills the measured
// fields; the runner adds Mode, Labels and Cell before storing it.
type Sample struct {
	Workload   string            `json:"workload"` // always "pingpong"
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

// OK reports whether the sample is a successful exchange with a whole pong
// body (see LengthOK: for sizes below 4 the original pong answers "pong").
func (s Sample) OK() bool { return s.Error == "" && s.Code == 200 && LengthOK(s.Size, s.Length) }

// TransferRate is the inner transfer rate in bytes per second, as ppbench
// computes it (length / duration); 0 when the sample carries no duration.
func (s Sample) TransferRate() float64 {
	if s.DurationMS <= 0 {
		return 0
	}
	return float64(s.Length) * 1000 / s.DurationMS
}
