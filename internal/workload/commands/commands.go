// Package commands lists the workloads' commands: each client (`cnperf
// siege`, `cnperf stream`, ...) and server (`cnperf serve pong`, `cnperf
// serve stream`, ...). It links
// their implementations (servers, clients, the Olric data grid, cobra), so
// only the command line imports it; the spec, the runner, record and
// analysis know the workloads by their descriptors (package registry).
package commands

import (
	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/conns"
	"github.com/cnperf/cnperf/internal/workload/grid"
	"github.com/cnperf/cnperf/internal/workload/pingpong/server"
	"github.com/cnperf/cnperf/internal/workload/pingpong/siege"
	"github.com/cnperf/cnperf/internal/workload/rr"
	"github.com/cnperf/cnperf/internal/workload/stream"
	"github.com/cnperf/cnperf/internal/workload/udp"
)

// Command makes one of a workload's commands.
type Command func(workload.Console) *cobra.Command

// Workload is one workload's commands, by its name in specs.
type Workload struct {
	Name   string
	Client Command
	// Serve are its servers, `cnperf serve X` (ping-pong has two);
	// workloads sharing a server share its command (jitter and datagram:
	// `serve udp`).
	Serve []Command
}

// all are the workloads' commands, in the registry's order: ping-pong,
// then the socket workloads.
var all = []Workload{
	{"pingpong", siege.Command, []Command{server.PingCommand, server.PongCommand}},
	{"stream", stream.ClientCommand, []Command{stream.ServeCommand}},
	{"rr", rr.ClientCommand, []Command{rr.ServeCommand}},
	{"jitter", udp.JitterCommand, []Command{udp.ServeCommand}},
	{"datagram", udp.DatagramCommand, []Command{udp.ServeCommand}},
	{"grid", grid.ClientCommand, []Command{grid.ServeCommand}},
	{"conns", conns.ClientCommand, []Command{conns.ServeCommand}},
}

// All returns the workloads' commands.
func All() []Workload { return append([]Workload(nil), all...) }

// Clients returns every workload's client command.
func Clients(con workload.Console) []*cobra.Command {
	var out []*cobra.Command
	for _, w := range all {
		out = append(out, w.Client(con))
	}
	return out
}

// Servers returns the workloads' server commands, each once.
func Servers(con workload.Console) []*cobra.Command {
	var out []*cobra.Command
	seen := map[string]bool{}
	for _, w := range all {
		for _, serve := range w.Serve {
			srv := serve(con)
			if !seen[srv.Name()] {
				seen[srv.Name()] = true
				out = append(out, srv)
			}
		}
	}
	return out
}
