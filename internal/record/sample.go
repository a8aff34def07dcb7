package record

import "time"

// Sample is one ping-pong request as siege saw it (Kratzke's HTTP
// ping-pong: siege → ping → pong, a message of Size bytes), stored as one
// line of samples.jsonl. Siege fills the measured fields; the runner adds
// Mode, Labels and Cell before storing it. It is the one kind of record
// that is stored per request rather than as a client's envelope line
// (Record): runs have always stored it so, and analysis reads it so.
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
// body (see BodyLengthOK: for sizes below 4 the original pong answers
// "pong").
func (s Sample) OK() bool { return s.Error == "" && s.Code == 200 && BodyLengthOK(s.Size, s.Length) }

// TransferRate is the inner transfer rate in bytes per second, as ppbench
// computes it (length / duration); 0 when the sample carries no duration.
func (s Sample) TransferRate() float64 {
	if s.DurationMS <= 0 {
		return 0
	}
	return float64(s.Length) * 1000 / s.DurationMS
}

// BodyLengthOK reports whether length is a whole pong body for a request
// of size bytes. That is size, and 4 for size < 4 (the original Go pong
// answers any size below 4 with "pong"); below 4 bytes the original pongs
// disagree, so a size itself (cnperf's pong up to 0.1 answered "p", "pn",
// "png") and 3 (the Dart pong's "png") count as whole too. Ping and pong
// (package pingpong) judge a body by the same rule.
func BodyLengthOK(size, length int) bool {
	if size >= 4 {
		return length == size
	}
	return length == 4 || length == 3 || length == size
}
