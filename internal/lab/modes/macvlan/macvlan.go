// Package macvlan gives each container a macvlan (bridge mode) on its host's
// NIC: its own MAC and address on the underlay, no bridge, no NAT.
package macvlan

import (
	"github.com/cnperf/cnperf/internal/lab"
)

// Mode is the macvlan mode.
type Mode struct{}

func (Mode) Name() string { return "macvlan" }
func (Mode) Summary() string {
	return "container with a macvlan (bridge mode) on the host NIC and its own underlay address"
}

// Build gives every server's container a macvlan on eth0.
func (Mode) Build(l *lab.Lab, servers []lab.Host, port int) ([]lab.Endpoint, error) {
	b := l.Builder()
	var eps []lab.Endpoint
	for _, h := range servers {
		ctr := lab.ContainerNS(l.Name, h.Name)
		if err := l.CreateNS(ctr); err != nil {
			return nil, err
		}
		if err := b.Macvlan(h.NS, "eth0", ctr, "eth0"); err != nil {
			return nil, err
		}
		ip := lab.MacvlanIP(h.Index).String()
		if err := b.Addr(ctr, "eth0", ip+"/24"); err != nil {
			return nil, err
		}
		addr := lab.HostPort(ip, port)
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen: lab.HostPort("0.0.0.0", port), External: addr, Internal: addr,
			Path: []string{h.Name + ":eth0 (macvlan parent)", "container:eth0 (macvlan)"},
		})
	}
	return eps, nil
}
