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
// routing says, and records the chain in l.Chain.
func upChain(l *lab.Lab, cfg lab.Config, mark Mark, routing string) error {
	b := netdev.B{Lab: cfg.Name}
	mtu := mtu(cfg.Conditions.MTU)
	for i, spec := range cfg.Topology.Hosts {
		h := lab.Host{Name: spec.Name, Index: i + 1, NS: lab.NS(cfg.Name, spec.Name), Addr: lab.UnderlayIP(i + 1).String()}
		if err := createNS(mark, h.NS); err != nil {
			return err
		}
		if err := b.Addr(h.NS, "lo", h.Addr+"/32"); err != nil {
			return err
		}
		l.Hosts = append(l.Hosts, h)
	}
	c := &record.Chain{Routing: routing}
	for i := 1; i < len(l.Hosts); i++ {
		from, to := l.Hosts[i-1], l.Hosts[i]
		subnet, fromIP, toIP := ChainSegment(i)
		if err := chainHop(l, cfg, mark, i, from, to, mtu); err != nil {
			return err
		}
		if err := b.Addr(from.NS, ChainNext, fromIP.String()+"/24"); err != nil {
			return err
		}
		if err := b.Addr(to.NS, ChainPrev, toIP.String()+"/24"); err != nil {
			return err
		}
		c.Segments = append(c.Segments, record.ChainSegment{Index: i, Subnet: subnet,
			From: from.Name, FromIP: fromIP.String(), To: to.Name, ToIP: toIP.String()})
	}
	for _, h := range l.Hosts {
		if err := routeChain(b, h, len(l.Hosts), routing); err != nil {
			return err
		}
	}
	l.Chain = c
	return nil
}

// routeChain gives host h its routes: to its neighbours' addresses over
// the segments they share, and with kernel routing to every other host's
// address and segment through the neighbour towards it, forwarding on.
// With relay routing forwarding stays as the mode sets it: a mode that
// forwards its containers' traffic (to a TUN) still finds no route past a
// neighbour.
func routeChain(b netdev.B, h lab.Host, n int, routing string) error {
	type route struct {
		dst string
		via net.IP
		dev string
	}
	var rs []route
	if h.Index > 1 { // towards h1
		_, prevIP, _ := ChainSegment(h.Index - 1)
		rs = append(rs, route{lab.UnderlayIP(h.Index-1).String() + "/32", prevIP, ChainPrev})
		if routing == ChainKernel {
			for j := 1; j < h.Index-1; j++ {
				subnet, _, _ := ChainSegment(j)
				rs = append(rs, route{lab.UnderlayIP(j).String() + "/32", prevIP, ChainPrev}, route{subnet, prevIP, ChainPrev})
			}
		}
	}
	if h.Index < n { // towards hN
		_, _, nextIP := ChainSegment(h.Index)
		rs = append(rs, route{lab.UnderlayIP(h.Index+1).String() + "/32", nextIP, ChainNext})
		if routing == ChainKernel {
			for j := h.Index + 2; j <= n; j++ {
				subnet, _, _ := ChainSegment(j - 1)
				rs = append(rs, route{lab.UnderlayIP(j).String() + "/32", nextIP, ChainNext}, route{subnet, nextIP, ChainNext})
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
	src := lab.UnderlayIP(h.Index)
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
		return b.Sysctl(h.NS, "net.ipv4.ip_forward", "1")
	}
	return nil
}
