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
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Mode is the veth-routed mode.
type Mode struct{}

func (Mode) Name() string { return "veth-routed" }
func (Mode) Summary() string {
	return "container on a veth pair with a /32 route on the host, no bridge, no NAT (pipework's veth)"
}

// Build gives each endpoint's container a veth to its host: the container
// holds 198.19.i.(2+slot)/32 and routes everything via 198.19.i.1, which
// every host-side veth holds, so the host answers for it on each; the host
// routes the container's /32 to its veth and forwards.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	b := nb.Net()
	eps, err := nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		if e.Slot == 0 {
			if err := b.Sysctl(h.NS, "net.ipv4.ip_forward", "1"); err != nil {
				return lab.Endpoint{}, err
			}
		}
		ctr := nb.NS(e)
		if err := nb.CreateNS(ctr); err != nil {
			return lab.Endpoint{}, err
		}
		veth := lab.Dev("vethr", e.Slot)
		gw, _, _ := lab.HostBridge(h.Index)
		gwIP, ip := lab.IP(gw), lab.SlotIP(h.Index, e.Slot)
		steps := []func() error{
			func() error { return b.Veth(h.NS, veth, "", ctr, "eth0", nb.MTU()) },
			func() error { return b.Addr(h.NS, veth, gwIP.String()+"/32") },
			func() error { return b.RouteDev(h.NS, ip.String()+"/32", veth) },
			func() error { return b.Addr(ctr, "eth0", ip.String()+"/32") },
			func() error { return b.RouteDev(ctr, gwIP.String()+"/32", "eth0") },
			func() error { return b.DefaultRoute(ctr, gwIP) },
		}
		for _, s := range steps {
			if err := s(); err != nil {
				return lab.Endpoint{}, err
			}
		}
		addr := lab.HostPort(ip.String(), e.Port(nb.Port))
		return lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen: lab.HostPort("0.0.0.0", e.Port(nb.Port)), External: addr, Internal: addr,
			Path: []string{h.Name + ":eth0", h.Name + " routing (/32 via " + veth + ")", h.Name + ":" + veth, "container:eth0"},
		}, nil
	})
	if err != nil {
		return nil, err
	}
	if err := RouteHosts(nb); err != nil {
		return nil, err
	}
	return eps, nil
}

// RouteHosts teaches every host of the lab (also those without endpoints)
// the route to each other host's container subnet 198.19.i.0/24 via that
// host's underlay address, hosts side by side.
func RouteHosts(nb *netns.Build) error {
	b := nb.Net()
	return lab.EachHost(nb.AllHosts, func(h lab.Host) error {
		var routes []netdev.Route
		for _, o := range nb.Hosts {
			if o.Name != h.Name {
				_, _, subnet := lab.HostBridge(o.Index)
				routes = append(routes, netdev.Route{Dst: subnet, Via: net.ParseIP(o.Addr).To4()})
			}
		}
		if err := b.Routes(h.NS, routes); err != nil {
			return fmt.Errorf("routes to the containers of the other hosts: %w", err)
		}
		return nil
	})
}
