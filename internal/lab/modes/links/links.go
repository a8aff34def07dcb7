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
	"github.com/cnperf/cnperf/internal/lab/bridged"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Mode is the links mode.
type Mode struct{}

func (Mode) Name() string { return "links" }
func (Mode) Summary() string {
	return "containers on one host's bridge addressing each other directly, no NAT between them (docker links); published ports from outside"
}

// Families: the bridge mode's families; containers address
// each other by their own IPv6 addresses on the bridge's /64 as by their
// IPv4 ones.
func (Mode) Families() []string { return lab.EveryFamily() }

// Build puts every endpoint's container on cnbr0 of the one host that
// carries endpoints, publishes its ports on the host, and gives it its own
// address as the one peers dial (the IPv6 one on a lab with IPv6).
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	if err := OneHost(nb.Build); err != nil {
		return nil, err
	}
	return nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		ctr, ips, err := bridged.AttachAll(nb, e)
		if err != nil {
			return lab.Endpoint{}, err
		}
		if err := bridged.Publish(nb, e, ips); err != nil {
			return lab.Endpoint{}, err
		}
		p := e.Port(nb.Port)
		ep := lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Path: []string{"container:eth0", h.Name + ":" + lab.Dev("veth0", e.Slot), h.Name + ":" + bridged.Bridge + " (no NAT between containers)"},
		}, nb.Conditions, ips.V4, ips.V6, p)
		// From outside, the host's published port.
		v4, v6 := lab.HostAddrs(h)
		ext := lab.Addressed(lab.Endpoint{}, nb.Conditions, v4, v6, p)
		ep.External, ep.External4 = ext.External, ext.External4
		return ep, nil
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
