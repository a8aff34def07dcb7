package macvlan

import (
	"errors"
	"fmt"
	"net"

	"github.com/docker/docker/api/types/network"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/lab/netdev"
)

const dockerNet = "cnperf-macvlan"

// errMacvlanRemote: slots past 0 need routes on their hosts and in their
// sandboxes, which cnperf adds only where it can enter them.
var errMacvlanRemote = errors.New("macvlan: several endpoints on a host need routes on the hosts and in the sandboxes, which cnperf adds only on hosts it emulates")

// BuildDocker makes a macvlan network (bridge mode, parent: the host's NIC)
// on each server's engine over the underlay subnet. Addresses Docker picks
// itself stay in the upper half, away from the hosts and the fixed
// container addresses; the gateway is an unused address, as nothing leaves
// the subnet. With several endpoints on a host, the network also holds the
// host's /24 of lab.SlotRange, where slots past 0 sit as on the netns
// driver, and every host and sandbox routes the other range on the link
// (Docker routes only a container's own subnet).
func (Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	b, image, err := d.Engines()
	if err != nil {
		return nil, err
	}
	several := d.Several()
	if several && d.Remote {
		return nil, errMacvlanRemote
	}
	if several {
		nb := netdev.B{Lab: d.Lab}
		if err := lab.EachHost(d.AllHosts, func(h lab.Host) error { return nb.RouteDev(h.NS, lab.SlotRange, "eth0") }); err != nil {
			return nil, err
		}
	}
	return d.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		fail := func(err error) (lab.Endpoint, error) { return lab.Endpoint{}, err }
		if e.Slot == 0 {
			if err := dockerNetwork(b, h, several); err != nil {
				return fail(err)
			}
		}
		ip, onLink := lab.MacvlanIP(h.Index), []string{lab.SlotRange}
		if e.Slot > 0 {
			ip, onLink = lab.SlotRangeIP(h.Index, e.Slot), []string{lab.Underlay, lab.SlotRange}
		}
		sb, err := b.Sandbox(h.Name, image, dockerbuild.Attach{Network: dockerNet, IP: ip.String(), Slot: e.Slot})
		if err != nil {
			return fail(err)
		}
		if several {
			if err := dockerbuild.RouteOnLink(d.Lab, sb, "eth0", onLink...); err != nil {
				return fail(err)
			}
		}
		info, err := b.Inspect(h.Name, dockerNet)
		if err != nil {
			return fail(err)
		}
		addr := lab.HostPort(ip.String(), e.Port(d.Port))
		return lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen: lab.HostPort("0.0.0.0", e.Port(d.Port)), External: addr, Internal: addr,
			Path:   []string{h.Name + ":eth0 (macvlan parent)", "container:eth0 (docker macvlan)"},
			Docker: docker.EndpointOf(sb, &info),
		}, nil
	})
}

// dockerNetwork creates host h's macvlan network: the underlay, and with
// several endpoints per host the host's /24 of the slot range
// 198.18.(128+i).0/24, its gateway .254 past the last slot.
func dockerNetwork(b dockerbuild.B, h lab.Host, several bool) error {
	cfg := []network.IPAMConfig{{Subnet: lab.Underlay, IPRange: "198.18.0.192/26", Gateway: "198.18.0.254"}}
	if several {
		slots := &net.IPNet{IP: lab.SlotRangeIP(h.Index, 0), Mask: net.CIDRMask(24, 32)}
		// Host 127's /24 would be every engine's docker0 (engine.BridgeIP).
		if _, bip, _ := net.ParseCIDR(engine.BridgeIP); h.Index >= lab.SlotRangeHosts || bip.Contains(slots.IP) {
			return fmt.Errorf("macvlan: host %s is host %d; on the docker driver only the first %d hosts may carry several endpoints", h.Name, h.Index, lab.SlotRangeHosts-1)
		}
		gw := lab.SlotRangeIP(h.Index, 254)
		cfg = append(cfg, network.IPAMConfig{Subnet: slots.String(), Gateway: gw.String()})
	}
	_, err := b.Network(h.Name, dockerNet, network.CreateOptions{Driver: "macvlan",
		Options: map[string]string{"parent": "eth0", "macvlan_mode": "bridge"},
		IPAM:    &network.IPAM{Config: cfg}})
	return err
}
