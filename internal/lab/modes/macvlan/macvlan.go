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
// host's first at 198.18.0.(100+i)/24 as always (in a lab of more than
// lab.MacvlanHosts hosts, whose own addresses reach past .100, at
// lab.MacvlanAddr's 198.18.128.i/17), the others in lab.SlotRange, which
// every host and container then reaches on the link. Hosts are built side
// by side.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	b := nb.Net()
	hosts := len(nb.AllHosts)
	onLink := nb.Several() || lab.MacvlanSpread(hosts)
	if onLink {
		err := lab.EachHost(nb.AllHosts, func(h lab.Host) error { return b.RouteDev(h.NS, lab.SlotRange, "eth0") })
		if err != nil {
			return nil, err
		}
	}
	return nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		fail := func(err error) (lab.Endpoint, error) { return lab.Endpoint{}, err }
		ctr := nb.NS(e)
		if err := nb.CreateNS(ctr); err != nil {
			return fail(err)
		}
		if err := b.Macvlan(h.NS, "eth0", ctr, "eth0"); err != nil {
			return fail(err)
		}
		ip, bits := lab.MacvlanAddr(h.Index, hosts)
		if e.Slot > 0 {
			if h.Index > lab.SlotRangeHosts {
				return fail(fmt.Errorf("macvlan: host %s is host %d; only the first %d hosts may carry several endpoints", h.Name, h.Index, lab.SlotRangeHosts))
			}
			ip, bits = lab.SlotRangeIP(h.Index, e.Slot), 17
		}
		if err := b.Addr(ctr, "eth0", fmt.Sprintf("%s/%d", ip, bits)); err != nil {
			return fail(err)
		}
		if onLink {
			// The other range than the container's own.
			other := lab.SlotRange
			if bits == 17 {
				other = lab.Underlay
			}
			if err := b.RouteDev(ctr, other, "eth0"); err != nil {
				return fail(err)
			}
		}
		addr := lab.HostPort(ip.String(), e.Port(nb.Port))
		return lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen: lab.HostPort("0.0.0.0", e.Port(nb.Port)), External: addr, Internal: addr,
			Path: []string{h.Name + ":eth0 (macvlan parent)", "container:eth0 (macvlan)"},
		}, nil
	})
}
