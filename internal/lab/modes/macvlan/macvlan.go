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

// Families: the containers' addresses are the underlay's, of either family.
func (Mode) Families() []string { return lab.EveryFamily() }

// Build gives every endpoint's container a macvlan on its host's eth0: the
// host's first at 198.18.0.(100+i)/24 as always (in a lab of more than
// lab.MacvlanHosts hosts, whose own addresses reach past .100, at
// lab.MacvlanAddr's 198.18.128.i/17), the others in lab.SlotRange, which
// every host and container then reaches on the link. Hosts are built side
// by side.
//
// On a lab with IPv6 every container also (ipv6: only) gets its address on
// the underlay's /64, which holds them all: lab.MacvlanAddr6, or
// lab.MacvlanSlotIP6 for slots past 0.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	b := nb.Net()
	c := nb.Conditions
	hosts := len(nb.AllHosts)
	onLink := c.HasIPv4() && (nb.Several() || lab.MacvlanSpread(hosts))
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
		ip6 := lab.MacvlanAddr6(h.Index, hosts)
		if e.Slot > 0 {
			if h.Index > lab.SlotRangeHosts {
				return fail(fmt.Errorf("macvlan: host %s is host %d; only the first %d hosts may carry several endpoints", h.Name, h.Index, lab.SlotRangeHosts))
			}
			ip, bits = lab.SlotRangeIP(h.Index, e.Slot), 17
			ip6 = lab.MacvlanSlotIP6(h.Index, e.Slot)
		}
		var cidrs []string
		if c.HasIPv4() {
			cidrs = append(cidrs, fmt.Sprintf("%s/%d", ip, bits))
		}
		if c.HasIPv6() {
			cidrs = append(cidrs, ip6.String()+"/64")
		}
		for _, a := range cidrs {
			if err := b.Addr(ctr, "eth0", a); err != nil {
				return fail(err)
			}
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
		return lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Path: []string{h.Name + ":eth0 (macvlan parent)", "container:eth0 (macvlan)"},
		}, c, ip, ip6, e.Port(nb.Port)), nil
	})
}
