// Package useroverlay holds the user-space overlays: containers on a
// per-host bridge, each host's other-host traffic routed into a TUN device
// that cnperf's overlay router (internal/lab/router) carries to the other
// hosts over UDP on the underlay; in clear (overlay-userspace, as Flannel's
// udp backend and Weave's sleeve mode) or encrypted with userspace
// WireGuard (overlay-encrypted). Published ports reach a container through
// DNAT on its host, as with Docker.
package useroverlay

import (
	"context"
	"fmt"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/router"
	"github.com/cnperf/cnperf/internal/poll"
)

// The overlay's address plan: host i's containers are on 198.19.(160+i).0/24
// (gateway .1, container .2); the hosts route all of 198.19.160.0/19 into
// their TUN.
const (
	Range    = "198.19.160.0/19"
	tunName  = "cnov0"
	bridge   = "ovbr1"
	udpPort  = 8285  // Flannel's udp backend port
	wgPort   = 51820 // WireGuard's port
	udpMTU   = 1472  // 1500 - IPv4 (20) - UDP (8)
	wgMTU    = 1420  // 1500 - IPv4 (20) - UDP (8) - WireGuard (32) - room kept as wg-quick does
	maxHosts = 31
)

// Subnet is host i's container subnet.
func Subnet(i int) string { return fmt.Sprintf("198.19.%d.0/24", 160+i) }

// Mode is one of the user-space overlays.
type Mode struct{ Kind string }

// Modes returns both.
func Modes() []lab.Mode {
	return []lab.Mode{Mode{Kind: router.KindUDP}, Mode{Kind: router.KindWireGuard}}
}

func (m Mode) Name() string {
	if m.Kind == router.KindWireGuard {
		return "overlay-encrypted"
	}
	return "overlay-userspace"
}

func (m Mode) Summary() string {
	if m.Kind == router.KindWireGuard {
		return fmt.Sprintf("containers on a WireGuard overlay in user space (wireguard-go over a TUN, %s, MTU %d)", router.Cipher, wgMTU)
	}
	return fmt.Sprintf("containers on cnperf's batched user-space UDP overlay router over a TUN (Weave sleeve; flannel-udp is the real per-packet one), MTU %d", udpMTU)
}

// mtu is the TUN's and the containers' MTU: the underlay's less the
// overlay's header (1472 and 1420 on 1500), unless a condition sets it.
func (m Mode) mtu(nb *netns.Build) int {
	if m.Kind == router.KindWireGuard {
		return nb.OverlayMTU(1500 - wgMTU)
	}
	return nb.OverlayMTU(1500 - udpMTU)
}

func (m Mode) port() int {
	if m.Kind == router.KindWireGuard {
		return wgPort
	}
	return udpPort
}

// ChainRouting: on a chain of hosts the clear overlay's routers relay
// (netns.ChainRelay); the encrypted one is not built there (WireGuard
// would relay through each host's kernel, not in its router).
func (m Mode) ChainRouting() string {
	if m.Kind == router.KindUDP {
		return netns.ChainRelay
	}
	return ""
}

// Build puts each server's container behind a bridge, starts the host's
// router and routes the overlay's range into its TUN.
func (m Mode) Build(nb *netns.Build) ([]lab.Endpoint, error) {
	servers := nb.Hosts
	// Host i's containers are on 198.19.(160+i).0/24 inside the /19 the
	// hosts route into the TUN: hosts 1..31 only.
	for _, h := range servers {
		if h.Index > maxHosts {
			return nil, fmt.Errorf("%s: at most %d hosts (its containers' subnets are 198.19.161-191.0/24); host %s is host %d", m.Name(), maxHosts, h.Name, h.Index)
		}
	}
	type keys struct{ private, public string }
	hostKeys := map[string]keys{}
	if m.Kind == router.KindWireGuard {
		for _, h := range servers {
			priv, pub, err := router.NewKey()
			if err != nil {
				return nil, err
			}
			hostKeys[h.Name] = keys{priv, pub}
		}
	}
	b := nb.Net()
	var eps []lab.Endpoint
	for _, e := range nb.Endpoints {
		h := e.Host
		ctr := nb.NS(e)
		if err := nb.CreateNS(ctr); err != nil {
			return nil, err
		}
		subnet := Subnet(h.Index)
		gw, ctrIP := fmt.Sprintf("198.19.%d.1", 160+h.Index), fmt.Sprintf("198.19.%d.%d", 160+h.Index, 2+e.Slot)
		if err := b.BridgedContainer(h.NS, bridge, lab.Dev("vethov1", e.Slot), ctr, "eth0", gw+"/24", ctrIP+"/24", m.mtu(nb), true); err != nil {
			return nil, err
		}
		if e.Slot > 0 {
			if err := b.PublishTo(h.NS, bridge, lab.IP(ctrIP+"/24"), e.Shift, false, nb.Publish...); err != nil {
				return nil, err
			}
			eps = append(eps, m.endpoint(nb, e, ctr, ctrIP))
			continue
		}
		if err := b.NATExempt(h.NS, subnet, Range); err != nil {
			return nil, err
		}
		if err := b.Publish(h.NS, bridge, subnet, lab.IP(ctrIP+"/24"), nb.Publish...); err != nil {
			return nil, err
		}
		cfg := router.Config{Kind: m.Kind, TUN: tunName, MTU: m.mtu(nb), Listen: lab.HostPort(h.Addr, m.port()),
			PrivateKey: hostKeys[h.Name].private}
		for _, o := range servers {
			if o.Name != h.Name {
				// On a chain the neighbour towards o relays.
				cfg.Peers = append(cfg.Peers, router.Peer{Subnet: Subnet(o.Index), Endpoint: lab.HostPort(nb.Toward(h, o).Addr, m.port()),
					PublicKey: hostKeys[o.Name].public})
			}
		}
		// The cores condition places the router with the application or apart.
		if err := nb.StartProcess("router-"+h.Name, h.NS, nb.Conditions.RouterCPUs(), []string{"serve", "overlay", "--config", cfg.JSON()}); err != nil {
			return nil, err
		}
		if err := b.WaitLink(h.NS, tunName, 10*time.Second); err != nil {
			return nil, fmt.Errorf("%w (see logs/%s-router-%s.log)", err, nb.Lab, h.Name)
		}
		// Bound, the router takes its peers' first packets (WireGuard's
		// handshake): a handshake lost to a router still starting is
		// retried only after 5 s.
		if err := waitBound(nb.Process("router-"+h.Name).PID(), m.port(), 10*time.Second); err != nil {
			return nil, fmt.Errorf("router on %s: %w (see logs/%s-router-%s.log)", h.Name, err, nb.Lab, h.Name)
		}
		if err := b.RouteDev(h.NS, Range, tunName); err != nil {
			return nil, err
		}
		eps = append(eps, m.endpoint(nb, e, ctr, ctrIP))
	}
	return eps, nil
}

// endpoint describes the endpoint in slot e of its host, in namespace ctr
// at address ip.
func (m Mode) endpoint(nb *netns.Build, e lab.EndpointAt, ctr, ip string) lab.Endpoint {
	h, p := e.Host, e.Port(nb.Port)
	return lab.Endpoint{
		Host: h.Name, NS: ctr, Container: true,
		Listen:   lab.HostPort("0.0.0.0", p),
		External: lab.HostPort(h.Addr, p),
		Internal: lab.HostPort(ip, p),
		Path: []string{"container:eth0", h.Name + ":" + bridge, h.Name + ":" + tunName + " (TUN)",
			fmt.Sprintf("cnperf overlay router (%s, user space)", m.Kind), fmt.Sprintf("%s:eth0 UDP %d", h.Name, m.port())},
		Router: &lab.RouterInfo{Kind: m.Kind, TUN: tunName, MTU: m.mtu(nb), Port: m.port(), Cipher: m.cipher()},
	}
}

func (m Mode) cipher() string {
	if m.Kind == router.KindWireGuard {
		return router.Cipher
	}
	return "none"
}

// waitBound waits until the router's namespace has a UDP socket on port.
func waitBound(pid, port int, within time.Duration) error {
	err := poll.Until(context.Background(), within, 20*time.Millisecond, func() (bool, error) {
		return namespace.Bound(pid, port, []string{"udp"}), nil
	})
	if err != nil {
		return fmt.Errorf("UDP port %d not bound within %s", port, within)
	}
	return nil
}
