// Package bridge is Docker's default datapath: the container sits behind a
// per-host bridge on a private subnet, is reached through a port published on
// the host's address (DNAT) and leaves through masquerade, with iptables
// chains laid out as Docker lays them out.
package bridge

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/bridged"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Mode is the bridge mode.
type Mode struct{}

func (Mode) Name() string { return "bridge" }
func (Mode) Summary() string {
	return "container behind a per-host bridge, published port (DNAT) and masquerade (docker -p)"
}

// Families: IPv6 as Docker builds it with ip6tables on (NAT66: the same
// DNAT and masquerade in ip6tables' nat table), and both on dual.
func (Mode) Families() []string { return lab.EveryFamily() }

// Build puts each endpoint's container behind cnbr0 on its host and
// publishes its ports. Endpoints on one host reach each other through the
// host's published ports too (hairpin), as their Internal address is the
// host's. Hosts are built side by side.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	return nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		ctr, ips, err := bridged.AttachAll(nb, e)
		if err != nil {
			return lab.Endpoint{}, err
		}
		if err := bridged.Publish(nb, e, ips); err != nil {
			return lab.Endpoint{}, err
		}
		v4, v6 := lab.HostAddrs(h)
		return lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Path: []string{h.Name + ":eth0", NATPath(nb.Conditions), h.Name + ":" + bridged.Bridge, h.Name + ":" + lab.Dev("veth0", e.Slot), "container:eth0"},
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
