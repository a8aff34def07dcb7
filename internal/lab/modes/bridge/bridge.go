// Package bridge is Docker's default datapath: the container sits behind a
// per-host bridge on a private subnet, is reached through a port published on
// the host's address (DNAT) and leaves through masquerade, with iptables
// chains laid out as Docker lays them out.
package bridge

import (
	"net"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/spec/conditions"
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

// Families: IPv6 as Docker builds it with ip6tables on (NAT66: the same
// DNAT and masquerade in ip6tables' nat table), and both on dual.
func (Mode) Families() []string { return Families }

// Families are the ip_family values the bridge, links and overlay modes
// carry.
var Families = []string{conditions.IPv4, conditions.IPv6, conditions.Dual}

// Build puts each endpoint's container behind cnbr0 on its host and
// publishes its ports. Endpoints on one host reach each other through the
// host's published ports too (hairpin), as their Internal address is the
// host's. Hosts are built side by side.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	return nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		ctr, ips, err := AttachAll(nb, e)
		if err != nil {
			return lab.Endpoint{}, err
		}
		if err := Publish(nb, e, ips); err != nil {
			return lab.Endpoint{}, err
		}
		v4, v6 := lab.HostAddrs(h)
		return lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Path: []string{h.Name + ":eth0", NATPath(nb.Conditions), h.Name + ":" + Bridge, h.Name + ":" + lab.Dev("veth0", e.Slot), "container:eth0"},
		}, nb.Conditions, v4, v6, e.Port(nb.Port)), nil
	})
}

// NATPath names the tables that translate in an endpoint's Path: IPv4's
// as always, ip6tables' on IPv6 (and on dual, whose workloads dial IPv6).
func NATPath(c conditions.Set) string {
	switch c.Family() {
	case conditions.IPv6:
		return "ip6tables DNAT/MASQUERADE"
	case conditions.Dual:
		return "ip6tables DNAT/MASQUERADE (iptables for IPv4)"
	}
	return "iptables DNAT/MASQUERADE"
}

// Addrs are a container's addresses on its bridge: V4 on a lab with IPv4,
// V6 on a lab with IPv6 (nil where the lab has not that family).
type Addrs struct{ V4, V6 net.IP }

// Attach creates the endpoint's container namespace and puts it on its
// host's cnbr0 (AttachAll); it returns the namespace and the container's
// IPv4 address, its IPv6 one on an IPv6-only lab.
func Attach(nb *netns.Build, e lab.EndpointAt) (string, net.IP, error) {
	ctr, ips, err := AttachAll(nb, e)
	if ips.V4 == nil {
		return ctr, ips.V6, err
	}
	return ctr, ips.V4, err
}

// AttachAll creates the endpoint's container namespace and puts it on its
// host's cnbr0 (Leg).
func AttachAll(nb *netns.Build, e lab.EndpointAt) (string, Addrs, error) {
	ctr := nb.NS(e)
	if err := nb.CreateNS(ctr); err != nil {
		return "", Addrs{}, err
	}
	ips, err := Leg(nb, e, Bridge, lab.Dev("veth0", e.Slot), ctr, "eth0", e.Host.Index)
	if err != nil {
		return "", Addrs{}, err
	}
	return ctr, ips, nil
}

// Leg puts the container ctr on bridge br of its host (created with the
// host's first container) through a veth (veth on the host, ctrIf in the
// container), at slot's address of the address plan's index idx: on a
// lab with IPv4 198.19.idx.(2+slot)/24, gateway 198.19.idx.1; on a lab
// with IPv6 2001:2:0:(1000+idx)::(2+slot)/64, gateway ::1, which also gets
// the link-local address the host solicits containers with when it
// forwards to them (lab namespaces make none); a default route via the
// gateway of each family. The overlay mode's gateway bridge is one too.
func Leg(nb *netns.Build, e lab.EndpointAt, br, veth, ctr, ctrIf string, idx int) (Addrs, error) {
	b, c := nb.Net(), nb.Conditions
	var ips Addrs
	if c.HasIPv4() {
		gw, _, _ := lab.HostBridge(idx)
		ips.V4 = lab.SlotIP(idx, e.Slot)
		if err := b.BridgedContainer(e.Host.NS, br, veth, ctr, ctrIf, gw, ips.V4.String()+"/24", nb.MTU(), true); err != nil {
			return Addrs{}, err
		}
	}
	if c.HasIPv6() {
		gw, _, _ := lab.HostBridge6(idx)
		ips.V6 = lab.SlotIP6(idx, e.Slot)
		cidr := ips.V6.String() + "/64"
		if !c.HasIPv4() {
			// The bridge and the veth are still to be made.
			if err := b.BridgedContainer(e.Host.NS, br, veth, ctr, ctrIf, gw, cidr, nb.MTU(), true); err != nil {
				return Addrs{}, err
			}
		} else {
			if e.Slot == 0 {
				if err := b.Addr(e.Host.NS, br, gw); err != nil {
					return Addrs{}, err
				}
			}
			if err := b.Addr(ctr, ctrIf, cidr); err != nil {
				return Addrs{}, err
			}
			if err := b.DefaultRoute(ctr, cidrIP(gw)); err != nil {
				return Addrs{}, err
			}
		}
		if e.Slot == 0 {
			if err := b.Addr(e.Host.NS, br, lab.LinkLocal6(1)); err != nil {
				return Addrs{}, err
			}
		}
	}
	return ips, nil
}

// Publish publishes the endpoint's ports on its host's cnbr0 (PublishOn).
func Publish(nb *netns.Build, e lab.EndpointAt, ips Addrs) error {
	return PublishOn(nb, e, Bridge, e.Host.Index, nb.Several(), ips)
}

// PublishOn publishes the endpoint's ports (shifted for its slot) on its
// host to its addresses ips on bridge br (the address plan's index idx),
// for each family the container has an address in: iptables' rules for
// IPv4, ip6tables' for IPv6. The host's first endpoint lays out the
// chains; with hairpin, the bridge's own containers may reach the
// published ports too.
func PublishOn(nb *netns.Build, e lab.EndpointAt, br string, idx int, hairpin bool, ips Addrs) error {
	b := nb.Net()
	_, _, subnet := lab.HostBridge(idx)
	_, _, subnet6 := lab.HostBridge6(idx)
	for _, f := range []struct {
		ip     net.IP
		subnet string
	}{{ips.V4, subnet}, {ips.V6, subnet6}} {
		if f.ip == nil {
			continue
		}
		if e.Slot == 0 {
			if err := b.PublishChains(e.Host.NS, br, f.subnet, hairpin); err != nil {
				return err
			}
		}
		if err := b.PublishTo(e.Host.NS, br, f.ip, e.Shift, hairpin, nb.PublishPorts()...); err != nil {
			return err
		}
	}
	return nil
}

// cidrIP strips the prefix length from a CIDR of either family (lab.IP
// reads IPv4 alone).
func cidrIP(cidr string) net.IP {
	ip, _, _ := net.ParseCIDR(cidr)
	return ip
}
