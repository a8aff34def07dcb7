// Package overlay is Docker's overlay driver (Flannel's vxlan backend routes
// each host's subnet at layer 3 instead, which costs 5-10 % more: the
// flannel-vxlan mode runs the real one; docs/labs.md):
// containers on a bridge behind a VXLAN device (UDP 4789, MTU 1450) that
// reaches the other hosts over the underlay. As with Docker, each container
// also has a leg on a per-host gateway bridge (docker_gwbridge) through which
// a published port reaches it from outside the cluster, while container to
// container traffic crosses the overlay.
package overlay

import (
	"fmt"
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

// ChainRouting: on a chain of hosts the VXLAN runs over an underlay the
// hosts route (netns.ChainKernel), as VXLAN runs over any IP network.
func (Mode) ChainRouting() string { return netns.ChainKernel }

// Build joins every endpoint's container to the overlay: the host's first
// at 198.19.200.i/24 as always, the others in lab.SlotRange, with routes on
// the link between the two ranges; each has its leg on the host's gateway
// bridge (lab.GatewayIndex's), with its ports published there. Hosts are
// built side by side.
func (Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	b := nb.Net()
	servers, port := nb.Hosts, nb.Port
	several := nb.Several()
	mtu := nb.OverlayMTU(Overhead)
	return nb.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		fail := func(err error) (lab.Endpoint, error) { return lab.Endpoint{}, err }
		ctr := nb.NS(e)
		if err := nb.CreateNS(ctr); err != nil {
			return fail(err)
		}
		if e.Slot == 0 {
			var remotes []net.IP
			for _, o := range servers {
				if o.Name != h.Name {
					remotes = append(remotes, net.ParseIP(o.Addr).To4())
				}
			}
			if err := b.Bridge(h.NS, "ovbr0", mtu); err != nil {
				return fail(err)
			}
			underlay := "eth0"
			if nb.Chained() {
				underlay = "" // several NICs: the routes pick
			}
			if err := b.VXLAN(h.NS, "vxlan0", underlay, VNI, Port, mtu, net.ParseIP(h.Addr).To4(), remotes, "ovbr0"); err != nil {
				return fail(err)
			}
		}
		ovIP, cidr, onLink := lab.OverlayIP(h.Index), lab.OverlayIP(h.Index).String()+"/24", lab.SlotRange
		if e.Slot > 0 {
			if h.Index > lab.SlotRangeHosts {
				return fail(fmt.Errorf("overlay: host %s is host %d; only the first %d hosts may carry several endpoints", h.Name, h.Index, lab.SlotRangeHosts))
			}
			ovIP = lab.SlotRangeIP(h.Index, e.Slot)
			cidr, onLink = ovIP.String()+"/17", lab.OverlaySubnet
		}
		if err := b.BridgedContainer(h.NS, "ovbr0", lab.Dev("vethov", e.Slot), ctr, "eth0", "", cidr, mtu, false); err != nil {
			return fail(err)
		}
		if several {
			if err := b.RouteDev(ctr, onLink, "eth0"); err != nil {
				return fail(err)
			}
		}
		gw, _, subnet := lab.HostBridge(lab.GatewayIndex(h.Index))
		gwIP := lab.SlotIP(lab.GatewayIndex(h.Index), e.Slot)
		if err := b.BridgedContainer(h.NS, "cngw0", lab.Dev("vethgw", e.Slot), ctr, "eth1", gw, gwIP.String()+"/24", nb.MTU(), true); err != nil {
			return fail(err)
		}
		if e.Slot == 0 {
			if err := b.PublishChains(h.NS, "cngw0", subnet, false); err != nil {
				return fail(err)
			}
		}
		if err := b.PublishTo(h.NS, "cngw0", gwIP, e.Shift, false, nb.PublishPorts()...); err != nil {
			return fail(err)
		}
		p := e.Port(port)
		return lab.Endpoint{
			Host: h.Name, NS: ctr, Container: true,
			Listen:   lab.HostPort("0.0.0.0", p),
			External: lab.HostPort(h.Addr, p),
			Internal: lab.HostPort(ovIP.String(), p),
			Path:     []string{"container:eth0", h.Name + ":" + lab.Dev("vethov", e.Slot), h.Name + ":ovbr0", h.Name + ":vxlan0 (VNI 4097, UDP 4789)", h.Name + ":eth0"},
		}, nil
	})
}
