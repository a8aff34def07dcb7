// Package bridge is Docker's default datapath: the container sits behind a
// per-host bridge on a private subnet, is reached through a port published on
// the host's address (DNAT) and leaves through masquerade, with iptables
// chains laid out as Docker lays them out.
package bridge

import (
	"fmt"
	"net"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Bridge is the per-host container bridge; the links and bridge-routed
// modes use it too.
const Bridge = "cnbr0"

// Mode is the bridge mode.
type Mode struct{}

func (Mode) Name() string { return "bridge" }
func (Mode) Summary() string {
	return "container behind a per-host bridge, published port (DNAT) and masquerade (docker -p)"
}

// Build puts each endpoint's container behind cnbr0 on its host and
// publishes its ports. Endpoints on one host reach each other through the
// host's published ports too (hairpin), as their Internal address is the
// host's. Hosts are built side by side.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	return nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		ctr, ip, err := Attach(nb, e)
		if err != nil {
			return lab.Endpoint{}, err
		}
		if err := Publish(nb, e, ip); err != nil {
			return lab.Endpoint{}, err
		}
		addr := lab.HostPort(h.Addr, e.Port(nb.Port))
		return lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen: lab.HostPort("0.0.0.0", e.Port(nb.Port)), External: addr, Internal: addr,
			Path: []string{h.Name + ":eth0", "iptables DNAT/MASQUERADE", h.Name + ":" + Bridge, h.Name + ":" + lab.Dev("veth0", e.Slot), "container:eth0"},
		}, nil
	})
}

// Attach creates the endpoint's container namespace and puts it on its
// host's cnbr0 (created with the host's first container, the gateway
// 198.19.i.1) at its slot's address 198.19.i.(2+slot), its default route
// via the gateway. It returns the namespace and the address. On a lab with
// IPv6 the bridge and container get HostBridge6's twins (2001:2:0:<1000+i>::1
// and ::(2+slot), /64) as well, or instead on an IPv6-only lab, where the
// address returned is the IPv6 one; the bridge also gets the link-local
// address the host forwards to its containers with.
func Attach(nb *netns.Build, e lab.EndpointAt) (string, net.IP, error) {
	ctr := nb.NS(e)
	if err := nb.CreateNS(ctr); err != nil {
		return "", nil, err
	}
	c, b, i := nb.Conditions, nb.Net(), e.Host.Index
	gw, _, _ := lab.HostBridge(i)
	ip, bits := lab.SlotIP(i, e.Slot), 24
	gw6, _, _ := lab.HostBridge6(i)
	ip6 := lab.SlotIP6(i, e.Slot)
	if !c.HasIPv4() {
		gw, ip, bits = gw6, ip6, 64
	}
	if err := b.BridgedContainer(e.Host.NS, Bridge, lab.Dev("veth0", e.Slot), ctr, "eth0", gw, fmt.Sprintf("%s/%d", ip, bits), nb.MTU(), true); err != nil {
		return "", nil, err
	}
	if !c.HasIPv6() {
		return ctr, ip, nil
	}
	if e.Slot == 0 { // the bridge's addresses, with its first container
		cidrs := []string{lab.LinkLocal6(1)}
		if c.HasIPv4() {
			cidrs = append(cidrs, gw6)
		}
		for _, a := range cidrs {
			if err := b.Addr(e.Host.NS, Bridge, a); err != nil {
				return "", nil, err
			}
		}
	}
	if c.HasIPv4() { // dual: the container's IPv6 twin beside its IPv4
		if err := b.Addr(ctr, "eth0", ip6.String()+"/64"); err != nil {
			return "", nil, err
		}
		if err := b.DefaultRoute(ctr, lab.IP(gw6)); err != nil {
			return "", nil, err
		}
	}
	return ctr, ip, nil
}

// Publish publishes the endpoint's ports (shifted for its slot) on its
// host, laying out the chains with the host's first endpoint; with several
// endpoints on a host, also for its own containers (hairpin).
func Publish(nb *netns.Build, e lab.EndpointAt, ip net.IP) error {
	b := nb.Net()
	_, _, subnet := lab.HostBridge(e.Host.Index)
	if e.Slot == 0 {
		if err := b.PublishChains(e.Host.NS, Bridge, subnet, nb.Several()); err != nil {
			return err
		}
	}
	return b.PublishTo(e.Host.NS, Bridge, ip, e.Shift, nb.Several(), nb.PublishPorts()...)
}
