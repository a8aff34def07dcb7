// Package netdev holds the building blocks the modes compose: bridges, veth
// pairs across namespaces, macvlan and VXLAN devices, addresses, routes,
// sysctls and Docker-style published ports. Every link it creates carries an
// alias naming cnperf, so it can be told apart from links cnperf did not make.
package netdev

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab/firewall"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
)

// Alias marks a link as cnperf's: "cnperf:<lab>".
func Alias(lab string) string { return "cnperf:" + lab }

// B builds inside one lab; its methods take namespace names.
type B struct {
	Lab string
}

// finish marks l as cnperf's and sets it up.
func (b B) finish(h *netlink.Handle, ns string, l netlink.Link) error {
	if err := h.LinkSetAlias(l, Alias(b.Lab)); err != nil {
		return fmt.Errorf("mark %s in %s: %w", l.Attrs().Name, ns, err)
	}
	if err := h.LinkSetUp(l); err != nil {
		return fmt.Errorf("set %s up in %s: %w", l.Attrs().Name, ns, err)
	}
	return nil
}

// Bridge creates a Linux bridge named name in ns, with MTU mtu (0: default),
// up.
func (b B) Bridge(ns, name string, mtu int) error {
	h, err := namespace.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	la := netlink.NewLinkAttrs()
	la.Name = name
	la.MTU = mtu
	br := &netlink.Bridge{LinkAttrs: la}
	if err := h.LinkAdd(br); err != nil {
		return fmt.Errorf("create bridge %s in %s: %w", name, ns, err)
	}
	l, err := h.LinkByName(name)
	if err != nil {
		return fmt.Errorf("find bridge %s in %s: %w", name, ns, err)
	}
	return b.finish(h, ns, l)
}

// Veth creates a veth pair: end a in namespace nsA (attached to bridge master
// when master is not empty) and end z in namespace nsZ, both up with MTU mtu.
func (b B) Veth(nsA, a, master, nsZ, z string, mtu int) error {
	ha, err := namespace.Handle(nsA)
	if err != nil {
		return err
	}
	defer ha.Close()
	fd, err := namespace.Fd(nsZ)
	if err != nil {
		return err
	}
	defer closeFd(fd)
	la := netlink.NewLinkAttrs()
	la.Name = a
	la.MTU = mtu
	v := &netlink.Veth{LinkAttrs: la, PeerName: z, PeerNamespace: netlink.NsFd(fd), PeerMTU: uint32(mtu)}
	if err := ha.LinkAdd(v); err != nil {
		return fmt.Errorf("create veth %s/%s (%s to %s): %w", a, z, nsA, nsZ, err)
	}
	la2, err := ha.LinkByName(a)
	if err != nil {
		return fmt.Errorf("find %s in %s: %w", a, nsA, err)
	}
	if err := attach(ha, nsA, la2, master); err != nil {
		return err
	}
	if err := b.finish(ha, nsA, la2); err != nil {
		return err
	}
	return namespace.WithLink(nsZ, "", z, func(hz *netlink.Handle, lz netlink.Link) error { return b.finish(hz, nsZ, lz) })
}

// Macvlan creates a bridge-mode macvlan on parent (in ns) and moves it into
// nsZ under the name z, up.
func (b B) Macvlan(ns, parent, nsZ, z string) error {
	err := namespace.WithLink(ns, "macvlan parent ", parent, func(h *netlink.Handle, p netlink.Link) error {
		fd, err := namespace.Fd(nsZ)
		if err != nil {
			return err
		}
		defer closeFd(fd)
		la := netlink.NewLinkAttrs()
		la.Name = z
		la.ParentIndex = p.Attrs().Index
		la.Namespace = netlink.NsFd(fd)
		if err := h.LinkAdd(&netlink.Macvlan{LinkAttrs: la, Mode: netlink.MACVLAN_MODE_BRIDGE}); err != nil {
			return fmt.Errorf("create macvlan %s on %s in %s: %w", z, parent, ns, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return namespace.WithLink(nsZ, "macvlan ", z, func(hz *netlink.Handle, l netlink.Link) error { return b.finish(hz, nsZ, l) })
}

// VXLAN creates a VXLAN device in ns bound to the underlay device dev and
// local address local, with head-end replication to every remote VTEP (an
// all-zero FDB entry per remote, as Flannel and Docker's unicast overlays
// do), attached to bridge master and up. With dev "" the device is bound
// to none: each remote's route picks the way out (a routed underlay whose
// hosts have several NICs).
func (b B) VXLAN(ns, name, dev string, vni, port, mtu int, local net.IP, remotes []net.IP, master string) error {
	h, err := namespace.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	la := netlink.NewLinkAttrs()
	la.Name = name
	la.MTU = mtu
	vx := &netlink.Vxlan{LinkAttrs: la, VxlanId: vni, SrcAddr: local, Port: port, Learning: true}
	if dev != "" {
		parent, err := h.LinkByName(dev)
		if err != nil {
			return fmt.Errorf("find underlay %s in %s: %w", dev, ns, err)
		}
		vx.VtepDevIndex = parent.Attrs().Index
	}
	if err := h.LinkAdd(vx); err != nil {
		return fmt.Errorf("create vxlan %s in %s: %w", name, ns, err)
	}
	l, err := h.LinkByName(name)
	if err != nil {
		return fmt.Errorf("find vxlan %s in %s: %w", name, ns, err)
	}
	for _, r := range remotes {
		fdb := &netlink.Neigh{
			LinkIndex:    l.Attrs().Index,
			Family:       unix.AF_BRIDGE,
			Flags:        netlink.NTF_SELF,
			State:        netlink.NUD_PERMANENT | netlink.NUD_NOARP,
			HardwareAddr: net.HardwareAddr{0, 0, 0, 0, 0, 0},
			IP:           r,
		}
		if err := h.NeighAppend(fdb); err != nil {
			return fmt.Errorf("add vxlan flood entry to %s in %s: %w", r, ns, err)
		}
	}
	if err := attach(h, ns, l, master); err != nil {
		return err
	}
	return b.finish(h, ns, l)
}

// Master attaches dev in ns to bridge master.
func (b B) Master(ns, dev, master string) error {
	return namespace.WithLink(ns, "", dev, func(h *netlink.Handle, l netlink.Link) error { return attach(h, ns, l, master) })
}

// attach attaches l in ns to bridge master (none when master is "").
func attach(h *netlink.Handle, ns string, l netlink.Link, master string) error {
	if master == "" {
		return nil
	}
	br, err := h.LinkByName(master)
	if err != nil {
		return fmt.Errorf("find bridge %s in %s: %w", master, ns, err)
	}
	if err := h.LinkSetMaster(l, br); err != nil {
		return fmt.Errorf("attach %s to %s in %s: %w", l.Attrs().Name, master, ns, err)
	}
	return nil
}

// Addr adds the address cidr (e.g. "198.18.0.2/24", "2001:2::2/64") to
// link in ns; an IPv6 one without duplicate address detection.
func (b B) Addr(ns, link, cidr string) error {
	return namespace.WithLink(ns, "", link, func(h *netlink.Handle, l netlink.Link) error {
		a, err := netlink.ParseAddr(cidr)
		if err != nil {
			return fmt.Errorf("parse address %s: %w", cidr, err)
		}
		if a.IP.To4() == nil {
			// The plan's IPv6 addresses are unique by construction: usable at
			// once, with no duplicate address detection on the wire.
			a.Flags |= unix.IFA_F_NODAD
		}
		if err := h.AddrAdd(l, a); err != nil {
			return fmt.Errorf("add %s to %s in %s: %w", cidr, link, ns, err)
		}
		return nil
	})
}

// DefaultRoute adds a default route via gw in ns.
func (b B) DefaultRoute(ns string, gw net.IP) error {
	h, err := namespace.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.RouteAdd(&netlink.Route{Gw: gw}); err != nil {
		return fmt.Errorf("add default route via %s in %s: %w", gw, ns, err)
	}
	return nil
}

// Sysctl writes a sysctl inside ns. /proc/sys/net follows the writing
// thread's namespace, so the write happens on a thread inside it.
func (b B) Sysctl(ns, key, value string) error {
	p := filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
	return namespace.Do(ns, func() error {
		if err := os.WriteFile(p, []byte(value), 0o644); err != nil {
			return fmt.Errorf("sysctl %s=%s in %s: %w", key, value, ns, err)
		}
		return nil
	})
}

// SysctlIfPresent writes a sysctl that only some kernels have (such as
// br_netfilter's); a missing key is not an error.
func (b B) SysctlIfPresent(ns, key, value string) error {
	if _, err := os.Stat(filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))); err != nil {
		return nil
	}
	return b.Sysctl(ns, key, value)
}

// Publish publishes a container's ports on the host as Docker's default
// bridge driver does (userland proxy off): a DNAT in a CNPERF nat chain
// reached from PREROUTING and OUTPUT for local destinations, a filter chain
// that accepts the forwarded traffic, and masquerade for the container subnet
// on the way out.
func (b B) Publish(ns, bridge, subnet string, ctr net.IP, ports ...Port) error {
	if err := b.PublishChains(ns, bridge, subnet, false); err != nil {
		return err
	}
	return b.PublishTo(ns, bridge, ctr, 0, false, ports...)
}

// PublishChains lays out Publish's chains and the rules a bridge's
// containers share, once per host namespace (with its first container): it
// creates the CNPERF chains, so they must not exist yet. With hairpin, a
// container may reach its own host's published ports too (PublishTo's
// hairpin), as Docker allows with its userland proxy off: what the bridge
// sends back to itself through DNAT is masqueraded, so the answer returns
// the same way. The rules go in as one iptables-restore run, in the order
// Docker lays them out. An IPv6 subnet gets the same layout in ip6tables'
// tables (Docker's ip6tables: true, NAT66) and turns IPv6 forwarding on;
// a dual-stack bridge calls it once per family.
func (b B) PublishChains(ns, bridge, subnet string, hairpin bool) error {
	r, key := PublishChainsRules(b.Lab, ns, bridge, subnet, hairpin)
	if err := r.Apply(); err != nil {
		return err
	}
	return b.Sysctl(ns, key, "1")
}

// PublishChainsRules are PublishChains' rules for subnet's family, and the
// sysctl that turns that family's forwarding on.
func PublishChainsRules(lab, ns, bridge, subnet string, hairpin bool) (*firewall.Rules, string) {
	f := firewall.ForAddr(ns, "cnperf:"+lab, subnet)
	loop, forward := "127.0.0.0/8", "net.ipv4.ip_forward"
	if f.IPv6() {
		loop, forward = "::1/128", "net.ipv6.conf.all.forwarding"
	}
	r := f.Rules()
	r.NewChain("nat", "CNPERF")
	r.Append("nat", "PREROUTING", "-m", "addrtype", "--dst-type", "LOCAL", "-j", "CNPERF")
	r.Append("nat", "OUTPUT", "!", "-d", loop, "-m", "addrtype", "--dst-type", "LOCAL", "-j", "CNPERF")
	r.Append("nat", "POSTROUTING", "-s", subnet, "!", "-o", bridge, "-j", "MASQUERADE")
	r.NewChain("filter", "CNPERF")
	r.Append("filter", "FORWARD", "-o", bridge, "-j", "CNPERF")
	r.Append("filter", "FORWARD", "-o", bridge, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT")
	r.Append("filter", "FORWARD", "-i", bridge, "!", "-o", bridge, "-j", "ACCEPT")
	r.Append("filter", "FORWARD", "-i", bridge, "-o", bridge, "-j", "ACCEPT")
	if hairpin {
		r.Append("nat", "POSTROUTING", "-s", subnet, "-o", bridge, "-m", "conntrack", "--ctstate", "DNAT", "-j", "MASQUERADE")
	}
	return r, forward
}

// PublishTo publishes one container's ports, each shifted by shift on the
// host and in the container alike (a host's later containers, whose ports
// must not meet its first's), into the chains PublishChains laid out; with
// hairpin, also for connections from the bridge's containers. The
// rules of both tables go in as one iptables-restore run, so a host with
// many containers pays one program run per container, not one per rule.
// An IPv6 ctr's rules go into ip6tables' tables.
func (b B) PublishTo(ns, bridge string, ctr net.IP, shift int, hairpin bool, ports ...Port) error {
	return PublishToRules(b.Lab, ns, bridge, ctr, shift, hairpin, ports...).Apply()
}

// PublishToRules are PublishTo's rules for ctr's family: an IPv6 DNAT
// target is bracketed ([addr]:port) and its filter match a /128.
func PublishToRules(lab, ns, bridge string, ctr net.IP, shift int, hairpin bool, ports ...Port) *firewall.Rules {
	f := firewall.ForAddr(ns, "cnperf:"+lab, ctr.String())
	host := ctr.String() + "/32"
	if f.IPv6() {
		host = ctr.String() + "/128"
	}
	r := f.Rules()
	from := []string{"!", "-i", bridge}
	if hairpin {
		from = nil
	}
	for _, p := range ports {
		n := p.Number + shift
		r.Append("nat", "CNPERF", append(slices.Clone(from), "-p", p.Protocol, "--dport", fmt.Sprint(n), "-j", "DNAT", "--to-destination", net.JoinHostPort(ctr.String(), fmt.Sprint(n)))...)
	}
	for _, p := range ports {
		n := fmt.Sprint(p.Number + shift)
		r.Append("filter", "CNPERF", "-d", host, "!", "-i", bridge, "-o", bridge, "-p", p.Protocol, "--dport", n, "-j", "ACCEPT")
	}
	return r
}

// Port is a published port: the same number on the host and in the
// container (a lab's ports, as its record keeps them).
type Port = record.Port

// BridgedContainer creates bridge br in hostNS with address gwCIDR (skipped
// when the bridge exists), and a veth from it to the container namespace
// ctrNS, named ctrIf there, with address ctrCIDR; with route set, the
// container's default route goes via the bridge's address.
func (b B) BridgedContainer(hostNS, br, veth, ctrNS, ctrIf, gwCIDR, ctrCIDR string, mtu int, route bool) error {
	h, err := namespace.Handle(hostNS)
	if err != nil {
		return err
	}
	_, lerr := h.LinkByName(br)
	h.Close()
	if lerr != nil {
		if err := b.Bridge(hostNS, br, mtu); err != nil {
			return err
		}
		if gwCIDR != "" {
			if err := b.Addr(hostNS, br, gwCIDR); err != nil {
				return err
			}
		}
	}
	if err := b.Veth(hostNS, veth, br, ctrNS, ctrIf, mtu); err != nil {
		return err
	}
	if err := b.Addr(ctrNS, ctrIf, ctrCIDR); err != nil {
		return err
	}
	if route {
		gw, _, err := net.ParseCIDR(gwCIDR)
		if err != nil {
			return fmt.Errorf("parse gateway %s: %w", gwCIDR, err)
		}
		return b.DefaultRoute(ctrNS, gw)
	}
	return nil
}

// Route is a route to Dst (a CIDR) via the gateway Via.
type Route struct {
	Dst string
	Via net.IP
}

// Routes adds routes via gateways in ns, over one netlink handle: the
// routes a lab's every host needs to the others' container subnets.
func (b B) Routes(ns string, routes []Route) error {
	h, err := namespace.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	for _, r := range routes {
		_, dst, err := net.ParseCIDR(r.Dst)
		if err != nil {
			return fmt.Errorf("parse %s: %w", r.Dst, err)
		}
		if err := h.RouteAdd(&netlink.Route{Dst: dst, Gw: r.Via}); err != nil {
			return fmt.Errorf("route %s via %s in %s: %w", r.Dst, r.Via, ns, err)
		}
	}
	return nil
}

// RouteDev routes cidr through device dev in ns (no gateway: a TUN).
func (b B) RouteDev(ns, cidr, dev string) error {
	_, dst, err := net.ParseCIDR(cidr)
	if err != nil {
		return fmt.Errorf("parse %s: %w", cidr, err)
	}
	return namespace.WithLink(ns, "", dev, func(h *netlink.Handle, l netlink.Link) error {
		if err := h.LinkSetUp(l); err != nil {
			return fmt.Errorf("set %s up in %s: %w", dev, ns, err)
		}
		if err := h.RouteAdd(&netlink.Route{Dst: dst, LinkIndex: l.Attrs().Index, Scope: netlink.SCOPE_LINK}); err != nil {
			return fmt.Errorf("route %s via %s in %s: %w", cidr, dev, ns, err)
		}
		return nil
	})
}

// WaitLink waits until device name exists in ns (a TUN a process creates).
func (b B) WaitLink(ns, name string, within time.Duration) error {
	h, err := namespace.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	err = poll.Until(context.Background(), within, 20*time.Millisecond, func() (bool, error) {
		_, err := h.LinkByName(name)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("no device %s in %s within %s", name, ns, within)
	}
	return nil
}

// NATExempt keeps traffic from src to dst out of masquerade in ns, ahead
// of the masquerade Publish adds: overlay traffic keeps its addresses.
// IPv6 prefixes' exemption goes into ip6tables' nat table.
func (b B) NATExempt(ns, src, dst string) error {
	return firewall.ForAddr(ns, "cnperf:"+b.Lab, src).Append("nat", "POSTROUTING", "-s", src, "-d", dst, "-j", "RETURN")
}

// Run runs a command (tc, ethtool, ovs-vsctl) inside ns; a failure's error
// holds its output. The child inherits the namespace of the thread that
// starts it.
func Run(ns string, name string, args ...string) error {
	var out []byte
	err := namespace.Do(ns, func() error {
		var err error
		out, err = exec.Command(name, args...).CombinedOutput()
		return err
	})
	if err != nil {
		return fmt.Errorf("%s %s in %s: %v: %s", name, strings.Join(args, " "), ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Shape limits dev's egress in ns to rate (tc's syntax, e.g. 100mbit) with
// a token bucket filter: at most 50 ms queued, and a burst of 128 kB. A
// TCP sender hands the NIC 64 kB frames (segmentation offload), 68 kB on
// the wire with a header per segment: a smaller bucket makes the qdisc cut
// each into 44 packets, work that a NIC with TSO does not ask of the host,
// and that left a user-space zone link (delayline) moving 44 times as many
// frames as it needs to, short of 1 Gbit/s.
func (b B) Shape(ns, dev, rate string) error {
	return Run(ns, "tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate, "burst", "128kb", "latency", "50ms")
}

// Offloads turns dev's segmentation, receive and checksum offloads on or
// off in ns, as `ethtool -K` does.
func (b B) Offloads(ns, dev string, on bool) error {
	v := "off"
	if on {
		v = "on"
	}
	return Run(ns, "ethtool", "-K", dev, "tso", v, "gso", v, "gro", v, "tx", v, "rx", v)
}
