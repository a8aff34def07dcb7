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

// Forward turns forwarding on in host h for the lab's families.
func Forward(nb *netns.Build, h lab.Host) error {
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
// the route to each other host's container subnet 198.19.i.0/24 via that
// host's underlay address (on a lab with IPv6, 2001:2:0:<1000+i>::/64 via
// its IPv6 one), hosts side by side.
func RouteHosts(nb *netns.Build) error {
	b := nb.Net()
	return lab.EachHost(nb.AllHosts, func(h lab.Host) error {
		var routes []netdev.Route
		for _, o := range nb.Hosts {
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
