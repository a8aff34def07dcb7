package registry

import "github.com/cnperf/cnperf/internal/workload"

// Add appends w to the list, as its one line in sockets would, until the
// returned function restores the list: for tests that add a workload.
func Add(w workload.Socket) (restore func()) {
	saved := sockets
	sockets = append(workload.Set(nil), sockets...)
	sockets = append(sockets, w)
	return func() { sockets = saved }
}

// AddSweep appends w to the size sweeps, as its one line in sweeps would,
// until the returned function restores the list.
func AddSweep(w workload.SizeSweep) (restore func()) {
	saved := sweeps
	sweeps = append(append([]workload.SizeSweep(nil), sweeps...), w)
	return func() { sweeps = saved }
}
