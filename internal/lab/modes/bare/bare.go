// Package bare is the reference mode: the server runs as a plain process in
// its host's own network namespace, with no container around it.
package bare

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/spec/conditions"
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
func (Mode) Families() []string { return Families }

// Families are the ip_family values bare and host carry.
var Families = []string{conditions.IPv4, conditions.IPv6, conditions.Dual}

// Build adds nothing: the hosts are ready as they are.
func (Mode) Build(b *netns.Build) ([]lab.Endpoint, error) {
	return Endpoints(b.Endpoints, b.Conditions, b.Port, false), nil
}

// Endpoints returns endpoints that listen in the hosts' own namespaces; the
// host mode shares them, wrapped as containers. Endpoints on one host share
// its stack: each is told apart by its ports (its slot's shift).
func Endpoints(at []lab.EndpointAt, c conditions.Set, port int, container bool) []lab.Endpoint {
	var eps []lab.Endpoint
	for _, e := range at {
		h := e.Host
		v4, v6 := lab.HostAddrs(h)
		eps = append(eps, lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: h.NS, Container: container,
			Path: []string{h.Name + ":eth0"},
		}, c, v4, v6, e.Port(port)))
	}
	return eps
}
