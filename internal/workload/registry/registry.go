// Package registry lists cnperf's workloads. Adding a socket workload is
// its package (a workload.Socket descriptor) and one line in sockets.
package registry

import (
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/grid"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/rr"
	"github.com/cnperf/cnperf/internal/workload/stream"
	"github.com/cnperf/cnperf/internal/workload/udp"
)

// sockets are the socket workloads, in the order errors and help list them.
var sockets = workload.Set{
	stream.Descriptor,
	rr.Descriptor,
	udp.JitterDescriptor,
	udp.DatagramDescriptor,
	grid.Descriptor,
}

// All returns the socket workloads.
func All() workload.Set { return append(workload.Set(nil), sockets...) }

// Lookup returns the socket workload of that name.
func Lookup(name string) (workload.Socket, bool) { return sockets.Lookup(name) }

// PingPong is the ping-pong workload: siege, ping and pong on three hosts,
// not a socket workload, but named and measured like one.
func PingPong() workload.Workload { return pingpong.Descriptor }

// Expand validates a spec's tests and returns their cases.
func Expand(tests []workload.Test) ([]workload.Case, error) { return sockets.Expand(tests) }

// Counts returns how many cases each test makes, checking their fields.
func Counts(tests []workload.Test) ([]int, error) { return sockets.Counts(tests) }
