// Package host is Docker's --net=host: the server is a container (its own
// cgroup and pid, uts, ipc and mount namespaces) that shares its host's
// network stack, so only the container's isolation differs from bare.
package host

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Mode is the host mode.
type Mode struct{}

func (Mode) Name() string { return "host" }
func (Mode) Summary() string {
	return "container sharing the host's network stack (docker --net=host)"
}

// Build adds no devices; the endpoints run as containers.
func (Mode) Build(b *netns.Build) ([]lab.Endpoint, error) {
	return lab.HostEndpoints(b.Endpoints, b.Conditions, b.Port, true), nil
}

// Families: the host's stack, as bare.
func (Mode) Families() []string { return lab.EveryFamily() }
