// Package links is Docker links as Bryzgalov (2014) used them: containers on one
// host's bridge talk to each other directly by their own addresses, with
// no NAT and no published port between them. A client outside reaches an
// endpoint through its published port (DNAT), as in the bridge mode.
// Links do not cross hosts, so neither does this mode.
package links

import (
	"fmt"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/modes/bridge"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Mode is the links mode.
type Mode struct{}

func (Mode) Name() string { return "links" }
func (Mode) Summary() string {
	return "containers on one host's bridge addressing each other directly, no NAT between them (docker links); published ports from outside"
}

// Build puts every endpoint's container on cnbr0 of the one host that
// carries endpoints, publishes its ports on the host, and gives it its own
// address as the one peers dial.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	if err := OneHost(nb.Build); err != nil {
		return nil, err
	}
	return nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		ctr, ip, err := bridge.Attach(nb, e)
		if err != nil {
			return lab.Endpoint{}, err
		}
		if err := bridge.Publish(nb, e, ip); err != nil {
			return lab.Endpoint{}, err
		}
		p := e.Port(nb.Port)
		return lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen:   lab.HostPort("0.0.0.0", p),
			External: lab.HostPort(h.Addr, p),
			Internal: lab.HostPort(ip.String(), p),
			Path:     []string{"container:eth0", h.Name + ":" + lab.Dev("veth0", e.Slot), h.Name + ":" + bridge.Bridge + " (no NAT between containers)"},
		}, nil
	})
}

// OneHost refuses endpoints on more than one host.
func OneHost(b *lab.Build) error {
	if len(b.Hosts) < 2 {
		return nil
	}
	var names []string
	for _, h := range b.Hosts {
		names = append(names, h.Name)
	}
	return fmt.Errorf("mode links: Docker links join containers on one host; the topology puts endpoints on %d hosts (%s)", len(names), strings.Join(names, ", "))
}
