// Package registry lists cnperf's workloads as their descriptors: what the
// spec, the runner, record and analysis need to know of each, and no
// implementation (servers, clients and their commands are listed apart, in
// package commands, which only the command line links). Adding a socket
// workload is its descriptor and one line in sockets, a size sweep its
// descriptor and one line in sweeps; either's commands one line in
// package commands.
package registry

import (
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

// sockets are the socket workloads, in the order errors and help list them.
var sockets = workload.Set{
	descriptors.Stream,
	descriptors.RR,
	descriptors.Jitter,
	descriptors.Datagram,
	descriptors.Grid,
	descriptors.Conns,
}

// All returns the socket workloads.
func All() workload.Set { return append(workload.Set(nil), sockets...) }

// Lookup returns the socket workload of that name.
func Lookup(name string) (workload.Socket, bool) { return sockets.Lookup(name) }

// sweeps are the size sweeps (workload.SizeSweep): a spec's test of one
// is a chunked size plan, not cases.
var sweeps = []workload.SizeSweep{pingpong.Descriptor}

// Sweep returns the size sweep of that name.
func Sweep(name string) (workload.SizeSweep, bool) { return workload.Find(sweeps, name) }

// Expand validates a spec's tests and returns their cases.
func Expand(tests []workload.Test) ([]workload.Case, error) { return sockets.Expand(tests) }

// Counts returns how many cases each test makes, checking their fields.
func Counts(tests []workload.Test) ([]int, error) { return sockets.Counts(tests) }

// Canonical keeps the tests' parameters in their declared types (see
// workload.Set.Canonical).
func Canonical(tests []workload.Test) { sockets.Canonical(tests) }

// Has reports whether the workload of that name has the capability
// (false for an unknown one).
func Has(name string, c workload.Capability) bool {
	w, ok := sockets.Lookup(name)
	return ok && workload.Has(w, c)
}
