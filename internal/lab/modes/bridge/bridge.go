// Package bridge is Docker's default datapath: the container sits behind a
// per-host bridge on a private subnet, is reached through a port published on
// the host's address (DNAT) and leaves through masquerade, with iptables
// chains laid out as Docker lays them out.
package bridge

import (
	"github.com/cnperf/cnperf/internal/lab"
)

// Mode is the bridge mode.
type Mode struct{}

func (Mode) Name() string { return "bridge" }
func (Mode) Summary() string {
	return "container behind a per-host bridge, published port (DNAT) and masquerade (docker -p)"
}

// Build puts a container behind cnbr0 on every server and publishes port.
func (Mode) Build(l *lab.Lab, servers []lab.Host, port int) ([]lab.Endpoint, error) {
	b := l.Builder()
	var eps []lab.Endpoint
	for _, h := range servers {
		ctr := lab.ContainerNS(l.Name, h.Name)
		if err := l.CreateNS(ctr); err != nil {
			return nil, err
		}
		gw, ctrCIDR, subnet := lab.HostBridge(h.Index)
		if err := b.BridgedContainer(h.NS, "cnbr0", "veth0", ctr, "eth0", gw, ctrCIDR, l.MTU(), true); err != nil {
			return nil, err
		}
		if err := b.Publish(h.NS, "cnbr0", subnet, lab.IP(ctrCIDR), l.PublishPorts()...); err != nil {
			return nil, err
		}
		addr := lab.HostPort(h.Addr, port)
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen: lab.HostPort("0.0.0.0", port), External: addr, Internal: addr,
			Path: []string{h.Name + ":eth0", "iptables DNAT/MASQUERADE", h.Name + ":cnbr0", h.Name + ":veth0", "container:eth0"},
		})
	}
	return eps, nil
}
