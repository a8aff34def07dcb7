// Package bridgerouted is Bryzgalov's (2014) iptables routing: containers on the
// host's bridge get addresses the rest of the network routes to (via their
// host's underlay address), and nothing is translated: no published ports,
// no masquerade. It is the bridge mode without NAT, as Docker builds with
// enable_ip_masquerade=false and gateway_mode_ipv4=routed.
package bridgerouted

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/bridged"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/routed"
)

// Mode is the bridge-routed mode.
type Mode struct{}

func (Mode) Name() string { return "bridge-routed" }
func (Mode) Summary() string {
	return "container behind a per-host bridge with a routable address, no NAT (iptables routing, docker routed mode)"
}

// Families: containers on routed IPv6 prefixes (HostBridge6) as on IPv4.
func (Mode) Families() []string { return lab.EveryFamily() }

// Build puts each endpoint's container on its host's cnbr0 at
// 198.19.i.(2+slot); the host forwards, and every other host routes
// 198.19.i.0/24 to it.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	return routed.ByHost(nb, func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		ctr, ip, err := bridged.Attach(nb, e)
		if err != nil {
			return lab.Endpoint{}, err
		}
		v4, v6 := ip, lab.SlotIP6(h.Index, e.Slot)
		return lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Path: []string{h.Name + ":eth0", h.Name + " routing (no NAT)", h.Name + ":" + bridged.Bridge, h.Name + ":" + lab.Dev("veth0", e.Slot), "container:eth0"},
		}, nb.Conditions, v4, v6, e.Port(nb.Port)), nil
	})
}
