package record

import "time"

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
