// Package bare is the reference mode: the server runs as a plain process in
// its host's own network namespace, with no container around it.
package bare

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Mode is the bare mode.
type Mode struct{}

func (Mode) Name() string { return "bare" }
func (Mode) Summary() string {
	return "plain process on the host's NIC: the reference"
}

// ChainRouting: on a chain of hosts the hosts route between the segments
// (the reference for Zismer's (2016) hops).
func (Mode) ChainRouting() string { return netns.ChainKernel }

// Families: the hosts' NICs carry either family or both.
func (Mode) Families() []string { return lab.EveryFamily() }

// Build adds nothing: the hosts are ready as they are.
func (Mode) Build(b *netns.Build) ([]lab.Endpoint, error) {
	return lab.HostEndpoints(b.Endpoints, b.Conditions, b.Port, false), nil
}
