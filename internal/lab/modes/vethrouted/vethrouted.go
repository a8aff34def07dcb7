// Package vethrouted is pipework's veth mode as Bryzgalov (2014) used it: each
// container has a veth pair to its host and an address of its own that the
// host routes (a /32 per container via its veth), with no bridge and no
// NAT. The other hosts route a host's container subnet via its underlay
// address, so containers are reached by their own addresses from
// everywhere in the lab.
package vethrouted

import (
	"fmt"
	"net"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/routed"
)

// Mode is the veth-routed mode.
type Mode struct{}

func (Mode) Name() string { return "veth-routed" }
func (Mode) Summary() string {
	return "container on a veth pair with a /32 route on the host, no bridge, no NAT (pipework's veth)"
}

// Families: each host routes its containers' IPv6 prefix (HostBridge6) as
// it does the IPv4 one.
func (Mode) Families() []string { return lab.EveryFamily() }

// Build gives each endpoint's container a veth to its host: the container
// holds 198.19.i.(2+slot)/32 and routes everything via 198.19.i.1, which
// every host-side veth holds, so the host answers for it on each; the host
// routes the container's /32 to its veth and forwards. IPv6 is the same
// with HostBridge6's addresses (/128), the host-side veth also holding the
// link-local address the host solicits the container with.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	b := nb.Net()
	c := nb.Conditions
	return routed.ByHost(nb, func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		ctr := nb.NS(e)
		if err := nb.CreateNS(ctr); err != nil {
			return lab.Endpoint{}, err
		}
		veth := lab.Dev("vethr", e.Slot)
		gw, _, _ := lab.HostBridge(h.Index)
		gwIP, ip := lab.IP(gw), lab.SlotIP(h.Index, e.Slot)
		gw6, _, _ := lab.HostBridge6(h.Index)
		gw6IP, ip6 := lab.IP(gw6), lab.SlotIP6(h.Index, e.Slot)
		steps := []func() error{func() error { return b.Veth(h.NS, veth, "", ctr, "eth0", nb.MTU()) }}
		type fam struct {
			gw, ip net.IP
			bits   int
		}
		var fams []fam
		if c.HasIPv4() {
			fams = append(fams, fam{gwIP, ip, 32})
		}
		if c.HasIPv6() {
			fams = append(fams, fam{gw6IP, ip6, 128})
			steps = append(steps, func() error { return b.Addr(h.NS, veth, lab.LinkLocal6(1)) })
		}
		for _, f := range fams {
			host := fmt.Sprintf("/%d", f.bits)
			steps = append(steps,
				func() error { return b.Addr(h.NS, veth, f.gw.String()+host) },
				func() error { return b.RouteDev(h.NS, f.ip.String()+host, veth) },
				func() error { return b.Addr(ctr, "eth0", f.ip.String()+host) },
				func() error { return b.RouteDev(ctr, f.gw.String()+host, "eth0") },
				func() error { return b.DefaultRoute(ctr, f.gw) })
		}
		for _, s := range steps {
			if err := s(); err != nil {
				return lab.Endpoint{}, err
			}
		}
		return lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Path: []string{h.Name + ":eth0", h.Name + " routing (/32 via " + veth + ")", h.Name + ":" + veth, "container:eth0"},
		}, c, ip, ip6, e.Port(nb.Port)), nil
	})
}
