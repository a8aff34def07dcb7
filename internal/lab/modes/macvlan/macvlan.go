// Package macvlan gives each container a macvlan (bridge mode) on its host's
// NIC: its own MAC and address on the underlay, no bridge, no NAT.
package macvlan

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Mode is the macvlan mode.
type Mode struct{}

func (Mode) Name() string { return "macvlan" }
func (Mode) Summary() string {
	return "container with a macvlan (bridge mode) on the host NIC and its own underlay address"
}

// Build gives every server's container a macvlan on eth0.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	b := nb.Net()
	var eps []lab.Endpoint
	for _, h := range nb.Hosts {
		ctr := nb.ContainerNS(h.Name)
		if err := nb.CreateNS(ctr); err != nil {
			return nil, err
		}
		if err := b.Macvlan(h.NS, "eth0", ctr, "eth0"); err != nil {
			return nil, err
		}
		ip := lab.MacvlanIP(h.Index).String()
		if err := b.Addr(ctr, "eth0", ip+"/24"); err != nil {
			return nil, err
		}
		addr := lab.HostPort(ip, nb.Port)
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen: lab.HostPort("0.0.0.0", nb.Port), External: addr, Internal: addr,
			Path: []string{h.Name + ":eth0 (macvlan parent)", "container:eth0 (macvlan)"},
		})
	}
	return eps, nil
}
