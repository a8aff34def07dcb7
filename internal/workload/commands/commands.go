// Package commands lists the socket workloads' commands: each client
// (`cnperf stream`, ...) and server (`cnperf serve stream`, ...). It links
// their implementations (servers, clients, the Olric data grid, cobra), so
// only the command line imports it; the spec, the runner, record and
// analysis know the workloads by their descriptors (package registry).
package commands

import (
	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/grid"
	"github.com/cnperf/cnperf/internal/workload/rr"
	"github.com/cnperf/cnperf/internal/workload/stream"
	"github.com/cnperf/cnperf/internal/workload/udp"
)

// Command makes one of a workload's commands.
type Command func(workload.Console) *cobra.Command

// Workload is one socket workload's commands, by its name in specs.
type Workload struct {
	Name   string
	Client Command
	// Serve is its server, `cnperf serve X`; workloads sharing a server
	// share its command (jitter and datagram: `serve udp`).
	Serve Command
}

// sockets are the socket workloads' commands, in the registry's order.
var sockets = []Workload{
	{"stream", stream.ClientCommand, stream.ServeCommand},
	{"rr", rr.ClientCommand, rr.ServeCommand},
	{"jitter", udp.JitterCommand, udp.ServeCommand},
	{"datagram", udp.DatagramCommand, udp.ServeCommand},
	{"grid", grid.ClientCommand, grid.ServeCommand},
}

// All returns the socket workloads' commands.
func All() []Workload { return append([]Workload(nil), sockets...) }

// Clients returns every socket workload's client command.
func Clients(con workload.Console) []*cobra.Command {
	var out []*cobra.Command
	for _, w := range sockets {
		out = append(out, w.Client(con))
	}
	return out
}

// Servers returns the socket workloads' server commands, each once.
func Servers(con workload.Console) []*cobra.Command {
	var out []*cobra.Command
	seen := map[string]bool{}
	for _, w := range sockets {
		srv := w.Serve(con)
		if !seen[srv.Name()] {
			seen[srv.Name()] = true
			out = append(out, srv)
		}
	}
	return out
}
