// Package macvlan gives each container a macvlan (bridge mode) on its host's
// NIC: its own MAC and address on the underlay, no bridge, no NAT.
package macvlan

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Mode is the macvlan mode.
type Mode struct{}

func (Mode) Name() string { return "macvlan" }
func (Mode) Summary() string {
	return "container with a macvlan (bridge mode) on the host NIC and its own underlay address"
}

// Build gives every endpoint's container a macvlan on its host's eth0: the
// host's first at 198.18.0.(100+i)/24 as always, the others in
// lab.SlotRange, which every host and container then reaches on the link.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	b := nb.Net()
	several := nb.Several()
	if several {
		for _, h := range nb.AllHosts {
			if err := b.RouteDev(h.NS, lab.SlotRange, "eth0"); err != nil {
				return nil, err
			}
		}
	}
	var eps []lab.Endpoint
	for _, e := range nb.Endpoints {
		h := e.Host
		ctr := nb.NS(e)
		if err := nb.CreateNS(ctr); err != nil {
			return nil, err
		}
		if err := b.Macvlan(h.NS, "eth0", ctr, "eth0"); err != nil {
			return nil, err
		}
		ip, cidr, onLink := lab.MacvlanIP(h.Index), lab.MacvlanIP(h.Index).String()+"/24", lab.SlotRange
		if e.Slot > 0 {
			if h.Index > lab.SlotRangeHosts {
				return nil, fmt.Errorf("macvlan: host %s is host %d; only the first %d hosts may carry several endpoints", h.Name, h.Index, lab.SlotRangeHosts)
			}
			ip = lab.SlotRangeIP(h.Index, e.Slot)
			cidr, onLink = ip.String()+"/17", lab.Underlay
		}
		if err := b.Addr(ctr, "eth0", cidr); err != nil {
			return nil, err
		}
		if several {
			if err := b.RouteDev(ctr, onLink, "eth0"); err != nil {
				return nil, err
			}
		}
		addr := lab.HostPort(ip.String(), e.Port(nb.Port))
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen: lab.HostPort("0.0.0.0", e.Port(nb.Port)), External: addr, Internal: addr,
			Path: []string{h.Name + ":eth0 (macvlan parent)", "container:eth0 (macvlan)"},
		})
	}
	return eps, nil
}
