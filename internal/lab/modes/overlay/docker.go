package overlay

import (
	"context"
	"fmt"
	"net"

	"github.com/docker/docker/api/types/network"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
)

const dockerNet = "cnperf-overlay"

// BuildDocker forms a swarm of the servers' engines over the underlay (the
// first server manages it) and attaches each sandbox to an attachable
// overlay network on the netns driver's overlay subnet. Docker picks
// addresses for its own endpoints (load balancers) from the upper half,
// away from the fixed container addresses. A published port reaches the
// sandbox through docker_gwbridge, as on the netns driver.
//
// With several endpoints on a host the network is lab.SlotRange instead
// (dockerSubnet): Docker gives each subnet of an overlay network a VXLAN
// segment of its own, so the netns driver's two ranges on one link cannot
// be built; every endpoint sits in the one range.
func (Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	b, image, err := d.Engines()
	if err != nil {
		return nil, err
	}
	servers, port := d.Hosts, d.Port
	var names []string
	for _, h := range servers {
		names = append(names, h.Name)
	}
	if err := b.Set.Swarm(context.Background(), names); err != nil {
		return nil, err
	}
	several := d.Several()
	ipam := network.IPAMConfig{Subnet: lab.OverlaySubnet, IPRange: "198.19.200.128/25", Gateway: "198.19.200.254"}
	if several {
		ipam = slotsIPAM
	}
	if _, err := b.Network(servers[0].Name, dockerNet, network.CreateOptions{Driver: "overlay", Attachable: true,
		IPAM: &network.IPAM{Config: []network.IPAMConfig{ipam}}}); err != nil {
		return nil, err
	}
	pub := d.Publish
	return d.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		ip, err := dockerIP(e, several)
		if err != nil {
			return lab.Endpoint{}, err
		}
		sb, err := b.Sandbox(h.Name, image, dockerbuild.Attach{Network: dockerNet, IP: ip.String(), Publish: dockerbuild.Shifted(pub, e.Shift), Slot: e.Slot})
		if err != nil {
			return lab.Endpoint{}, err
		}
		info, err := b.Inspect(h.Name, dockerNet)
		if err != nil {
			return lab.Endpoint{}, err
		}
		p := e.Port(port)
		return lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen:   lab.HostPort("0.0.0.0", p),
			External: lab.HostPort(h.Addr, p),
			Internal: lab.HostPort(ip.String(), p),
			Path:     []string{"container:eth0", h.Name + ":docker overlay " + dockerNet + " (VXLAN, UDP 4789)", h.Name + ":eth0"},
			Docker:   docker.EndpointOf(sb, &info),
		}, nil
	})
}

// slotsIPAM is the overlay network of a lab with several endpoints on a
// host: lab.SlotRange, its gateway and Docker's own picks in host 127's
// /24, which no endpoint then takes.
var slotsIPAM = network.IPAMConfig{Subnet: lab.SlotRange, IPRange: "198.18.255.0/24", Gateway: "198.18.255.254"}

// dockerIP is an endpoint's overlay address: host i's 198.19.200.i with
// one endpoint per host; with several, 198.18.128.i for slot 0 (the first
// /24 of the range, which no slot uses) and lab.SlotRangeIP for the others.
func dockerIP(e lab.EndpointAt, several bool) (net.IP, error) {
	i := e.Host.Index
	switch {
	case !several:
		return lab.OverlayIP(i), nil
	case e.Slot == 0:
		return net.IPv4(198, 18, 128, byte(i)).To4(), nil
	case i >= lab.SlotRangeHosts:
		return nil, fmt.Errorf("overlay: host %s is host %d; on the docker driver only the first %d hosts may carry several endpoints", e.Host.Name, i, lab.SlotRangeHosts-1)
	default:
		return lab.SlotRangeIP(i, e.Slot), nil
	}
}
