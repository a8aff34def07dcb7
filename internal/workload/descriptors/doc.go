// Package descriptors describes cnperf's socket workloads to the spec, the
// runner, record and analysis: their names, servers, parameters declared
// once, metrics, and how a stored total becomes values. It holds no
// server, client or command: those are in each workload's own package
// (stream, rr, udp, grid), which take their bounds from here, and only the
// command line links them. A stored total is read here through a view of
// the fields analysis needs; each workload's package tests that its
// record reads back through it.
package descriptors

import (
	"github.com/cnperf/cnperf/internal/workload"
)

// Bounds every socket workload shares.
const (
	MaxUDPPayload = 65507 // the largest UDP payload over IPv4
)

// omit is the warm-up parameter of stream and rr.
func omit() workload.Param {
	return workload.Param{Name: "omit", Kind: workload.Duration, Bounds: []workload.Bound{{Max: int64(workload.MaxDuration)}},
		Flag: "--omit", Default: "0s", Help: "warm-up sent before the measured time and left out of the summary"}
}
