// Package bridged puts containers on a bridge of their host: the netns
// driver's veth legs and published ports (Leg, PublishOn), the docker
// driver's user-defined bridge networks (DockerAttach). The bridge, links,
// bridge-routed and overlay modes build on it.
package bridged

import (
	"net"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Bridge is the per-host container bridge of the bridge, links and
// bridge-routed modes.
const Bridge = "cnbr0"

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
		if err := b.PublishTo(e.Host.NS, br, f.ip, e.Shift, hairpin, nb.Publish...); err != nil {
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
