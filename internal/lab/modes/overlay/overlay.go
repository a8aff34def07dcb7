// Package overlay is Docker's overlay driver (Flannel's vxlan backend routes
// each host's subnet at layer 3 instead, which costs 5-10 % more: the
// flannel-vxlan mode runs the real one; docs/labs.md):
// containers on a bridge behind a VXLAN device (UDP 4789, MTU 1450) that
// reaches the other hosts over the underlay. As with Docker, each container
// also has a leg on a per-host gateway bridge (docker_gwbridge) through which
// a published port reaches it from outside the cluster, while container to
// container traffic crosses the overlay.
package overlay

import (
	"fmt"
	"net"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/bridged"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// VXLAN parameters as Docker's overlay driver uses them.
const (
	VNI  = 4097
	Port = 4789
	MTU  = 1450
	// Overhead is VXLAN's header over IPv4: outer IP, UDP, VXLAN, inner
	// Ethernet (20 + 8 + 8 + 14).
	Overhead = 50
	// Overhead6 is VXLAN's header over IPv6, whose outer header is 40
	// bytes: 1430 on a 1500-byte underlay.
	Overhead6 = 70
)

// Mode is the overlay mode.
type Mode struct{}

func (Mode) Name() string { return "overlay" }
func (Mode) Summary() string {
	return "containers on a VXLAN overlay (UDP 4789, MTU 1450), published ports via a gateway bridge"
}

// Families: containers of either family or both on the overlay; on a lab
// with IPv6 (ipv6 and dual) the VXLAN runs over the hosts' IPv6 underlay.
func (Mode) Families() []string { return lab.EveryFamily() }

// ChainRouting: on a chain of hosts the VXLAN runs over an underlay the
// hosts route (netns.ChainKernel), as VXLAN runs over any IP network.
func (Mode) ChainRouting() string { return netns.ChainKernel }

// Tunnel says whether a lab's VXLAN runs over IPv6 and its header's
// overhead: IPv6 on a lab with IPv6 (ipv6, whose hosts have no IPv4
// address, and dual, where the tunnel takes the family the workloads
// dial), else IPv4.
func Tunnel(c conditions.Set) (ipv6 bool, overhead int) {
	if c.HasIPv6() {
		return true, Overhead6
	}
	return false, Overhead
}

// VTEPs are host h's VXLAN local address and its peers' (every other
// server's), in the tunnel's family: one all-zero FDB entry per peer.
func VTEPs(servers []lab.Host, h lab.Host, ipv6 bool) (local net.IP, remotes []net.IP) {
	addr := func(h lab.Host) net.IP {
		if ipv6 {
			return net.ParseIP(h.Addr6)
		}
		return net.ParseIP(h.Addr).To4()
	}
	for _, o := range servers {
		if o.Name != h.Name {
			remotes = append(remotes, addr(o))
		}
	}
	return addr(h), remotes
}

// Build joins every endpoint's container to the overlay: the host's first
// at 198.19.200.i/24 as always, the others in lab.SlotRange, with routes on
// the link between the two ranges; with IPv6, at 2001:2:0:2000::i/64 and
// the others at lab.OverlaySlotIP6 on the same /64. Each has its leg on
// the host's gateway bridge (lab.GatewayIndex's), with its ports
// published there in each family. Hosts are built side by side.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	b, c := nb.Net(), nb.Conditions
	servers, port := nb.Hosts, nb.Port
	several := nb.Several()
	over6, overhead := Tunnel(c)
	mtu := nb.OverlayMTU(overhead)
	return nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		fail := func(err error) (lab.Endpoint, error) { return lab.Endpoint{}, err }
		ctr := nb.NS(e)
		if err := nb.CreateNS(ctr); err != nil {
			return fail(err)
		}
		if e.Slot == 0 {
			local, remotes := VTEPs(servers, h, over6)
			if err := b.Bridge(h.NS, "ovbr0", mtu); err != nil {
				return fail(err)
			}
			underlay := "eth0"
			if nb.Chained() {
				underlay = "" // several NICs: the routes pick
			}
			if err := b.VXLAN(h.NS, "vxlan0", underlay, VNI, Port, mtu, local, remotes, "ovbr0"); err != nil {
				return fail(err)
			}
		}
		ov, cidrs, onLink, err := overlayAddrs(c, h, e.Slot)
		if err != nil {
			return fail(err)
		}
		if err := b.BridgedContainer(h.NS, "ovbr0", lab.Dev("vethov", e.Slot), ctr, "eth0", "", cidrs[0], mtu, false); err != nil {
			return fail(err)
		}
		for _, cidr := range cidrs[1:] {
			if err := b.Addr(ctr, "eth0", cidr); err != nil {
				return fail(err)
			}
		}
		if several && onLink != "" {
			if err := b.RouteDev(ctr, onLink, "eth0"); err != nil {
				return fail(err)
			}
		}
		gi := lab.GatewayIndex(h.Index)
		gw, err := bridged.Leg(nb, e, "cngw0", lab.Dev("vethgw", e.Slot), ctr, "eth1", gi)
		if err != nil {
			return fail(err)
		}
		if err := bridged.PublishOn(nb, e, "cngw0", gi, false, gw); err != nil {
			return fail(err)
		}
		v4, v6 := lab.HostAddrs(h)
		p := e.Port(port)
		ep := lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Path: []string{"container:eth0", h.Name + ":" + lab.Dev("vethov", e.Slot), h.Name + ":ovbr0", h.Name + ":vxlan0 (VNI 4097, UDP 4789" + tunnelPath(over6) + ")", h.Name + ":eth0"},
		}, c, ov.V4, ov.V6, p)
		// From outside, the host's published port, which reaches the
		// container's gateway leg.
		ext := lab.Addressed(lab.Endpoint{}, c, v4, v6, p)
		ep.External, ep.External4 = ext.External, ext.External4
		return ep, nil
	})
}

// tunnelPath says in an endpoint's Path that the VXLAN runs over IPv6.
func tunnelPath(ipv6 bool) string {
	if ipv6 {
		return " over IPv6"
	}
	return ""
}

// overlayAddrs are a container's addresses on the overlay (one per family
// the lab has, IPv4 first, each a CIDR) and, for a slot past 0 on IPv4,
// the range it reaches on the link (lab.OverlaySubnet, as slot 0 reaches
// lab.SlotRange; "" on an IPv6-only lab, whose /64 holds every slot).
func overlayAddrs(c conditions.Set, h lab.Host, slot int) (ips bridged.Addrs, cidrs []string, onLink string, err error) {
	if c.HasIPv4() {
		ip, cidr, link := lab.OverlayIP(h.Index), lab.OverlayIP(h.Index).String()+"/24", lab.SlotRange
		if slot > 0 {
			if h.Index > lab.SlotRangeHosts {
				return ips, nil, "", fmt.Errorf("overlay: host %s is host %d; only the first %d hosts may carry several endpoints", h.Name, h.Index, lab.SlotRangeHosts)
			}
			ip = lab.SlotRangeIP(h.Index, slot)
			cidr, link = ip.String()+"/17", lab.OverlaySubnet
		}
		ips.V4, onLink = ip, link
		cidrs = append(cidrs, cidr)
	}
	if c.HasIPv6() {
		ip := lab.OverlayIP6(h.Index)
		if slot > 0 {
			ip = lab.OverlaySlotIP6(h.Index, slot)
		}
		ips.V6 = ip
		cidrs = append(cidrs, ip.String()+"/64")
	}
	return ips, cidrs, onLink, nil
}
