// Package grid is the 2017 Coherence thesis's application-level workload: a client joins a
// data grid (Olric, embedded in cnperf) whose one storage member runs in
// the server's container, and for the test's duration removes the
// previous key and puts a 700-character value under a new key. It counts
// successful puts and failures and keeps each operation's time. Its
// descriptor (parameters, metrics, how a total reads) is
// descriptors.Grid.
package grid

import "github.com/cnperf/cnperf/internal/workload/descriptors"

const name = descriptors.GridName
