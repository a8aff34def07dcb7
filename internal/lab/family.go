package lab

import (
	"net"

	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// ListenAddr is where a server on port listens under c: every IPv4
// address (0.0.0.0) on an IPv4 lab, every address ([::], which on Linux
// also takes IPv4 unless the socket is IPv6-only) on a lab with IPv6.
func ListenAddr(c conditions.Set, port int) string {
	if c.HasIPv6() {
		return HostPort("::", port)
	}
	return HostPort("0.0.0.0", port)
}

// Addressed returns ep with Listen, External and Internal set for a
// server on port reached at v4 (IPv4) or v6 (IPv6), whichever c dials; on
// a dual-stack lab External4 and Internal4 carry the IPv4 address, so a
// run records both. A mode whose clients outside reach the server at
// another address (published ports) sets External itself afterwards.
func Addressed(ep Endpoint, c conditions.Set, v4, v6 net.IP, port int) Endpoint {
	ep.Listen = ListenAddr(c, port)
	dial := v4
	if c.DialsIPv6() {
		dial = v6
	}
	ep.External = HostPort(dial.String(), port)
	ep.Internal = ep.External
	if c.HasIPv4() && c.HasIPv6() {
		ep.External4 = HostPort(v4.String(), port)
		ep.Internal4 = ep.External4
	}
	return ep
}

// HostAddrs are host h's IPv4 and IPv6 underlay addresses (nil when the
// lab has no such family).
func HostAddrs(h Host) (v4, v6 net.IP) {
	return net.ParseIP(h.Addr), net.ParseIP(h.Addr6)
}

// EveryFamily is the ip_family values a mode carries when its datapath
// takes either family or both (every mode on the hosts' stacks, bridges
// and routes).
func EveryFamily() []string {
	return []string{conditions.IPv4, conditions.IPv6, conditions.Dual}
}

// HostEndpoints returns endpoints that listen in the hosts' own namespaces
// (the bare and host modes; a cluster's lab mode). Endpoints on one host
// share its stack: each is told apart by its ports (its slot's shift).
func HostEndpoints(at []EndpointAt, c conditions.Set, port int, container bool) []Endpoint {
	var eps []Endpoint
	for _, e := range at {
		h := e.Host
		v4, v6 := HostAddrs(h)
		eps = append(eps, Addressed(Endpoint{
			Host: h.Name, NS: h.NS, Container: container,
			Path: []string{h.Name + ":eth0"},
		}, c, v4, v6, e.Port(port)))
	}
	return eps
}
