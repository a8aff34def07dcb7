// Package routed makes hosts route their containers' subnets without NAT:
// each host forwards, and every host routes each other host's container
// subnet via that host's underlay address. The veth-routed and
// bridge-routed modes build on it.
package routed

import (
	"fmt"
	"net"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// ByHost builds the lab's endpoints with build, hosts side by side as
// netns.Build.ByHost does, each host forwarding (from its first endpoint
// on), then routes every host to the others' container subnets
// (RouteHosts).
func ByHost(nb *netns.Build, build func(e lab.EndpointAt) (lab.Endpoint, error)) ([]lab.Endpoint, error) {
	eps, err := nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		if e.Slot == 0 {
			if err := forward(nb, e.Host); err != nil {
				return lab.Endpoint{}, err
			}
		}
		return build(e)
	})
	if err != nil {
		return nil, err
	}
	if err := RouteHosts(nb.Build); err != nil {
		return nil, err
	}
	return eps, nil
}

// forward turns forwarding on in host h for the lab's families.
func forward(nb *netns.Build, h lab.Host) error {
	b := nb.Net()
	if nb.Conditions.HasIPv4() {
		if err := b.Sysctl(h.NS, "net.ipv4.ip_forward", "1"); err != nil {
			return err
		}
	}
	if nb.Conditions.HasIPv6() {
		return b.Sysctl(h.NS, "net.ipv6.conf.all.forwarding", "1")
	}
	return nil
}

// RouteHosts teaches every host of the lab (also those without endpoints)
// the route to each other endpoint host's container subnet 198.19.i.0/24
// via that host's underlay address (on a lab with IPv6,
// 2001:2:0:<1000+i>::/64 via its IPv6 one), hosts side by side: on either
// driver's emulated hosts.
func RouteHosts(lb *lab.Build) error {
	b := netdev.B{Lab: lb.Lab}
	return lab.EachHost(lb.AllHosts, func(h lab.Host) error {
		var routes []netdev.Route
		for _, o := range lb.Hosts {
			if o.Name == h.Name {
				continue
			}
			if o.Addr != "" {
				_, _, subnet := lab.HostBridge(o.Index)
				routes = append(routes, netdev.Route{Dst: subnet, Via: net.ParseIP(o.Addr).To4()})
			}
			if o.Addr6 != "" {
				_, _, subnet := lab.HostBridge6(o.Index)
				routes = append(routes, netdev.Route{Dst: subnet, Via: net.ParseIP(o.Addr6)})
			}
		}
		if err := b.Routes(h.NS, routes); err != nil {
			return fmt.Errorf("routes to the containers of the other hosts: %w", err)
		}
		return nil
	})
}
