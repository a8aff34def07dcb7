package netns

import (
	"fmt"
	"net"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/vishvananda/netlink"
)

// A chained lab (Zismer's (2016) hop chain) has no switch: hosts h1..hN are in a
// line, and segment i is a veth pair of its own between host i's ChainNext
// and host i+1's ChainPrev, on 198.18.(10+i).0/24 (host i .1, host i+1 .2).
// Each host keeps its address of the plan, 198.18.0.i, on its loopback, so
// modes address hosts as on a switch; how far that address is reachable is
// the chain's routing:
//
//   - ChainKernel (bare, overlay): every host forwards IP and routes each
//     other host's address, and the segments it is not on, to the
//     neighbour towards it: a routed underlay, over which VXLAN runs as
//     over any IP network.
//   - ChainRelay (overlay-userspace): a host routes only its neighbours'
//     addresses, over the segment they share; nothing further is
//     reachable below the overlay, whose routers relay hop by hop, as
//     Weave's sleeve routes through intermediate peers.
const (
	ChainKernel = "kernel"
	ChainRelay  = "relay"

	ChainPrev = "eth-prev" // towards host i-1
	ChainNext = "eth-next" // towards host i+1
)

// ChainMode is a mode that runs on a chain; ChainRouting says which
// routing its underlay needs (ChainKernel or ChainRelay), "" for none
// that works.
type ChainMode interface {
	ChainRouting() string
}

// ChainRefusal is a mode that says why it cannot run on a chain, for the
// one line that refuses it.
type ChainRefusal interface {
	NoChain() string
}

// chainRouting is the routing mode m needs on a chain, or why it cannot
// run on one.
func chainRouting(m lab.Mode) (string, error) {
	cm, ok := m.(ChainMode)
	if !ok || cm.ChainRouting() == "" {
		if r, ok := m.(ChainRefusal); ok {
			return "", fmt.Errorf("mode %s cannot run on a chain of hosts: %s (modes that can: bare, overlay, overlay-userspace)", m.Name(), r.NoChain())
		}
		return "", fmt.Errorf("mode %s cannot run on a chain of hosts (modes that can: bare, overlay, overlay-userspace)", m.Name())
	}
	return cm.ChainRouting(), nil
}

// CheckChainMode refuses a mode that cannot run on a chain, in one line.
func CheckChainMode(m lab.Mode) error {
	_, err := chainRouting(m)
	return err
}

// ChainSegment returns segment i's subnet and the addresses of its two
// ends (host i, host i+1), i from 1.
func ChainSegment(i int) (subnet string, from, to net.IP) {
	return fmt.Sprintf("198.18.%d.0/24", 10+i), net.IPv4(198, 18, byte(10+i), 1).To4(), net.IPv4(198, 18, byte(10+i), 2).To4()
}

// Chained says whether the lab's hosts are in a line.
func (b *Build) Chained() bool { return b.chain }

// Toward returns the host to send to for dst from host from: in a chain
// the neighbour on dst's side, else dst itself. Hosts are AllHosts.
func (b *Build) Toward(from, dst lab.Host) lab.Host {
	if !b.chain || from.Index == dst.Index {
		return dst
	}
	next := from.Index + 1
	if dst.Index < from.Index {
		next = from.Index - 1
	}
	for _, h := range b.AllHosts {
		if h.Index == next {
			return h
		}
	}
	return dst
}

// upChain builds a chained lab's hosts and segments and routes them as
// routing says, and records the chain in l.Chain. On a lab with IPv6 each
// host's 2001:2::i is on its loopback too, each segment also (ipv6: only)
// carries lab.ChainSegment6's /64, whose ends hold the link-local
// addresses fe80::1 (host i) and fe80::2 (host i+1) a forwarding host
// solicits with, and the routes are the IPv4 ones' twins. The record's
// segment addresses are the IPv4 ones, the IPv6 ones on an IPv6-only lab.
func upChain(l *lab.Lab, cfg lab.Config, mark Mark, routing string) error {
	b := netdev.B{Lab: cfg.Name}
	mtu := mtu(cfg.Conditions.MTU)
	c4, c6 := cfg.Conditions.HasIPv4(), cfg.Conditions.HasIPv6()
	for i, spec := range cfg.Topology.Hosts {
		h := lab.Host{Name: spec.Name, Index: i + 1, NS: lab.NS(cfg.Name, spec.Name)}
		var cidrs []string
		if c4 {
			h.Addr = lab.UnderlayIP(i + 1).String()
			cidrs = append(cidrs, h.Addr+"/32")
		}
		if c6 {
			h.Addr6 = lab.UnderlayIP6(i + 1).String()
			cidrs = append(cidrs, h.Addr6+"/128")
		}
		if err := createNS(mark, h.NS, c6); err != nil {
			return err
		}
		for _, a := range cidrs {
			if err := b.Addr(h.NS, "lo", a); err != nil {
				return err
			}
		}
		l.Hosts = append(l.Hosts, h)
	}
	c := &record.Chain{Routing: routing}
	for i := 1; i < len(l.Hosts); i++ {
		from, to := l.Hosts[i-1], l.Hosts[i]
		subnet, fromIP, toIP := ChainSegment(i)
		subnet6, fromIP6, toIP6 := lab.ChainSegment6(i)
		if err := chainHop(l, cfg, mark, i, from, to, mtu); err != nil {
			return err
		}
		var addrs [][3]string // namespace, device, CIDR
		if c4 {
			addrs = append(addrs, [3]string{from.NS, ChainNext, fromIP.String() + "/24"}, [3]string{to.NS, ChainPrev, toIP.String() + "/24"})
		}
		if c6 {
			addrs = append(addrs, [3]string{from.NS, ChainNext, fromIP6.String() + "/64"}, [3]string{to.NS, ChainPrev, toIP6.String() + "/64"},
				[3]string{from.NS, ChainNext, lab.LinkLocal6(1)}, [3]string{to.NS, ChainPrev, lab.LinkLocal6(2)})
		}
		for _, a := range addrs {
			if err := b.Addr(a[0], a[1], a[2]); err != nil {
				return err
			}
		}
		seg := record.ChainSegment{Index: i, Subnet: subnet, From: from.Name, FromIP: fromIP.String(), To: to.Name, ToIP: toIP.String()}
		if !c4 {
			seg.Subnet, seg.FromIP, seg.ToIP = subnet6, fromIP6.String(), toIP6.String()
		}
		c.Segments = append(c.Segments, seg)
	}
	for _, h := range l.Hosts {
		if c4 {
			if err := routeChain(b, h, len(l.Hosts), routing, chainPlan4); err != nil {
				return err
			}
		}
		if c6 {
			if err := routeChain(b, h, len(l.Hosts), routing, chainPlan6); err != nil {
				return err
			}
		}
	}
	l.Chain = c
	return nil
}

// chainPlan is one family's addresses of a chain: host i's own, and
// segment i's subnet and ends.
type chainPlan struct {
	host     func(i int) net.IP
	hostBits int
	segment  func(i int) (subnet string, from, to net.IP)
	forward  string // the sysctl that turns forwarding on
}

var (
	chainPlan4 = chainPlan{lab.UnderlayIP, 32, ChainSegment, "net.ipv4.ip_forward"}
	chainPlan6 = chainPlan{lab.UnderlayIP6, 128, lab.ChainSegment6, "net.ipv6.conf.all.forwarding"}
)

// routeChain gives host h its routes in one family (p): to its
// neighbours' addresses over the segments they share, and with kernel
// routing to every other host's address and segment through the neighbour
// towards it, forwarding on. With relay routing forwarding stays as the
// mode sets it: a mode that forwards its containers' traffic (to a TUN)
// still finds no route past a neighbour.
func routeChain(b netdev.B, h lab.Host, n int, routing string, p chainPlan) error {
	type route struct {
		dst string
		via net.IP
		dev string
	}
	own := func(i int) string { return fmt.Sprintf("%s/%d", p.host(i), p.hostBits) }
	var rs []route
	if h.Index > 1 { // towards h1
		_, prevIP, _ := p.segment(h.Index - 1)
		rs = append(rs, route{own(h.Index - 1), prevIP, ChainPrev})
		if routing == ChainKernel {
			for j := 1; j < h.Index-1; j++ {
				subnet, _, _ := p.segment(j)
				rs = append(rs, route{own(j), prevIP, ChainPrev}, route{subnet, prevIP, ChainPrev})
			}
		}
	}
	if h.Index < n { // towards hN
		_, _, nextIP := p.segment(h.Index)
		rs = append(rs, route{own(h.Index + 1), nextIP, ChainNext})
		if routing == ChainKernel {
			for j := h.Index + 2; j <= n; j++ {
				subnet, _, _ := p.segment(j - 1)
				rs = append(rs, route{own(j), nextIP, ChainNext}, route{subnet, nextIP, ChainNext})
			}
		}
	}
	hd, err := namespace.Handle(h.NS)
	if err != nil {
		return err
	}
	defer hd.Close()
	// The loopback address is a host's own: replies leave from it, so
	// each end sees the other's plan address, as on a switch.
	src := p.host(h.Index)
	for _, r := range rs {
		link, err := hd.LinkByName(r.dev)
		if err != nil {
			return fmt.Errorf("find %s in %s: %w", r.dev, h.NS, err)
		}
		_, dst, err := net.ParseCIDR(r.dst)
		if err != nil {
			return err
		}
		if err := hd.RouteAdd(&netlink.Route{Dst: dst, Gw: r.via, LinkIndex: link.Attrs().Index, Src: src}); err != nil {
			return fmt.Errorf("route %s via %s in %s: %w", r.dst, r.via, h.NS, err)
		}
	}
	if routing == ChainKernel {
		return b.Sysctl(h.NS, p.forward, "1")
	}
	return nil
}
