// Package overlay is Docker's overlay driver (and Flannel's vxlan backend):
// containers on a bridge behind a VXLAN device (UDP 4789, MTU 1450) that
// reaches the other hosts over the underlay. As with Docker, each container
// also has a leg on a per-host gateway bridge (docker_gwbridge) through which
// a published port reaches it from outside the cluster, while container to
// container traffic crosses the overlay.
package overlay

import (
	"net"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// VXLAN parameters as Docker's overlay driver uses them.
const (
	VNI  = 4097
	Port = 4789
	MTU  = 1450
	// Overhead is VXLAN's header over IPv4: outer IP, UDP, VXLAN, inner
	// Ethernet (20 + 8 + 8 + 14).
	Overhead = 50
)

// Mode is the overlay mode.
type Mode struct{}

func (Mode) Name() string { return "overlay" }
func (Mode) Summary() string {
	return "containers on a VXLAN overlay (UDP 4789, MTU 1450), published ports via a gateway bridge"
}

// Build joins every server's container to the overlay.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	b := nb.Net()
	servers, port := nb.Hosts, nb.Port
	var eps []lab.Endpoint
	for _, h := range servers {
		ctr := nb.ContainerNS(h.Name)
		if err := nb.CreateNS(ctr); err != nil {
			return nil, err
		}
		var remotes []net.IP
		for _, o := range servers {
			if o.Name != h.Name {
				remotes = append(remotes, net.ParseIP(o.Addr).To4())
			}
		}
		mtu := nb.OverlayMTU(Overhead)
		if err := b.Bridge(h.NS, "ovbr0", mtu); err != nil {
			return nil, err
		}
		if err := b.VXLAN(h.NS, "vxlan0", "eth0", VNI, Port, mtu, net.ParseIP(h.Addr).To4(), remotes, "ovbr0"); err != nil {
			return nil, err
		}
		ovIP := lab.OverlayIP(h.Index).String()
		if err := b.BridgedContainer(h.NS, "ovbr0", "vethov", ctr, "eth0", "", ovIP+"/24", mtu, false); err != nil {
			return nil, err
		}
		gw, ctrCIDR, subnet := lab.HostBridge(h.Index)
		if err := b.BridgedContainer(h.NS, "cngw0", "vethgw", ctr, "eth1", gw, ctrCIDR, nb.MTU(), true); err != nil {
			return nil, err
		}
		if err := b.Publish(h.NS, "cngw0", subnet, lab.IP(ctrCIDR), nb.PublishPorts()...); err != nil {
			return nil, err
		}
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen:   lab.HostPort("0.0.0.0", port),
			External: lab.HostPort(h.Addr, port),
			Internal: lab.HostPort(ovIP, port),
			Path:     []string{"container:eth0", h.Name + ":vethov", h.Name + ":ovbr0", h.Name + ":vxlan0 (VNI 4097, UDP 4789)", h.Name + ":eth0"},
		})
	}
	return eps, nil
}
