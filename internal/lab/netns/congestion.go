package netns

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netdev"
)

// setCongestion gives every namespace of the lab (and every Docker
// container's) the lab's TCP congestion control. A new namespace takes the
// machine's default, which varies between machines (bbr on some), and
// bbr's model of each connection made lab instances of one mode differ by
// 20 % for a whole run; so the lab sets its own (conditions.Congestion).
// Outside the root namespace the kernel lets the per-namespace default
// (the sysctl) take only the controls the machine allows
// (net.ipv4.tcp_allowed_congestion_control); for another one the lab sets
// it as a metric on every route instead (`ip route ... congctl`), which TCP
// takes for each connection over the route, both connecting and accepting.
func setCongestion(l *lab.Lab) error {
	cc := l.Conditions.Congestion()
	nss, err := labNamespaces(l)
	if err != nil {
		return err
	}
	via := "sysctl"
	for _, ns := range nss {
		if ns == l.Switch {
			continue // no TCP on the switch
		}
		err := (netdev.B{Lab: l.Name}).Sysctl(ns, "net.ipv4.tcp_congestion_control", cc)
		if errors.Is(err, syscall.EPERM) {
			err, via = congestionOnRoutes(ns, cc), "route"
		}
		if err != nil {
			return err
		}
	}
	l.TCPCongestion, l.TCPCongestionVia = cc, via
	return nil
}

// congestionOnRoutes sets cc on every unicast route of ns's main table,
// IPv4 and IPv6 (on a lab with IPv6, else its connections would take the
// namespace's default).
func congestionOnRoutes(ns, cc string) error {
	h, err := namespace.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	routes, err := h.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("list routes in %s: %w", ns, err)
	}
	v6, err := h.RouteList(nil, netlink.FAMILY_V6)
	if err != nil {
		return fmt.Errorf("list IPv6 routes in %s: %w", ns, err)
	}
	for _, r := range v6 {
		if r.Type == unix.RTN_UNICAST {
			routes = append(routes, r)
		}
	}
	for _, r := range routes {
		r.Congctl = cc
		// Of the flags the kernel reports, only these may be set: linkdown
		// (a bridge without ports, such as an idle docker0) is its own
		// state, and setting it is refused.
		r.Flags &= int(netlink.FLAG_ONLINK | netlink.FLAG_PERVASIVE)
		if err := h.RouteReplace(&r); err != nil {
			return fmt.Errorf("route %s in %s: congctl %s: %w", r.Dst, ns, cc, err)
		}
	}
	return nil
}
