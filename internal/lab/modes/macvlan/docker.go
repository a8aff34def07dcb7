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
		c := d.Conditions
		if e.Slot == 0 {
			if err := dockerNetwork(b, h, several, c.HasIPv6()); err != nil {
				return fail(err)
			}
		}
		ip, onLink := lab.MacvlanIP(h.Index), []string{lab.SlotRange}
		if e.Slot > 0 {
			ip, onLink = lab.SlotRangeIP(h.Index, e.Slot), []string{lab.Underlay, lab.SlotRange}
		}
		a := dockerbuild.Attach{Network: dockerNet, IP: ip.String(), Slot: e.Slot}
		ip6 := lab.MacvlanIP6(h.Index)
		if e.Slot > 0 {
			ip6 = lab.MacvlanSlotIP6(h.Index, e.Slot)
		}
		if c.HasIPv6() {
			a.IP6 = ip6.String()
		}
		sb, err := b.Sandbox(h.Name, image, a)
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
		return lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Path:   []string{h.Name + ":eth0 (macvlan parent)", "container:eth0 (docker macvlan)"},
			Docker: docker.EndpointOf(sb, &info),
		}, c, ip, ip6, e.Port(d.Port)), nil
	})
}

// dockerNetwork creates host h's macvlan network: the underlay (with
// ipv6 its /64 too, lab.UnderlayPrefix6), and with
// several endpoints per host the host's /24 of the slot range
// 198.18.(128+i).0/24, its gateway .254 past the last slot.
func dockerNetwork(b dockerbuild.B, h lab.Host, several, ipv6 bool) error {
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
	create := network.CreateOptions{Driver: "macvlan",
		Options: map[string]string{"parent": "eth0", "macvlan_mode": "bridge"}}
	if ipv6 {
		on := true
		create.EnableIPv6 = &on
		cfg = append(cfg, network.IPAMConfig{Subnet: lab.UnderlayPrefix6, Gateway: MacvlanGateway6})
	}
	create.IPAM = &network.IPAM{Config: cfg}
	_, err := b.Network(h.Name, dockerNet, create)
	return err
}

// MacvlanGateway6 is the gateway Docker's IPAM wants on the underlay /64:
// an address no host or container has (nothing leaves the /64), as
// 198.18.0.254 is IPv4's.
const MacvlanGateway6 = "2001:2::fffe"

// DockerFamilies: the containers' addresses are the underlay's, of either
// family: a Docker macvlan network with IPv6 on the underlay's /64 too.
func (Mode) DockerFamilies() []string { return Mode{}.Families() }
