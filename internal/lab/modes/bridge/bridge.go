// Package bridge is Docker's default datapath: the container sits behind a
// per-host bridge on a private subnet, is reached through a port published on
// the host's address (DNAT) and leaves through masquerade, with iptables
// chains laid out as Docker lays them out.
package bridge

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Mode is the bridge mode.
type Mode struct{}

func (Mode) Name() string { return "bridge" }
func (Mode) Summary() string {
	return "container behind a per-host bridge, published port (DNAT) and masquerade (docker -p)"
}

// Build puts a container behind cnbr0 on every server and publishes port.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	b := nb.Net()
	var eps []lab.Endpoint
	for _, h := range nb.Hosts {
		ctr := nb.ContainerNS(h.Name)
		if err := nb.CreateNS(ctr); err != nil {
			return nil, err
		}
		gw, ctrCIDR, subnet := lab.HostBridge(h.Index)
		if err := b.BridgedContainer(h.NS, "cnbr0", "veth0", ctr, "eth0", gw, ctrCIDR, nb.MTU(), true); err != nil {
			return nil, err
		}
		if err := b.Publish(h.NS, "cnbr0", subnet, lab.IP(ctrCIDR), nb.PublishPorts()...); err != nil {
			return nil, err
		}
		addr := lab.HostPort(h.Addr, nb.Port)
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen: lab.HostPort("0.0.0.0", nb.Port), External: addr, Internal: addr,
			Path: []string{h.Name + ":eth0", "iptables DNAT/MASQUERADE", h.Name + ":cnbr0", h.Name + ":veth0", "container:eth0"},
		})
	}
	return eps, nil
}
