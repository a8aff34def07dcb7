package macvlan

import (
	"github.com/docker/docker/api/types/network"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
)

const dockerNet = "cnperf-macvlan"

// BuildDocker makes a macvlan network (bridge mode, parent: the host's NIC)
// on each server's engine over the underlay subnet. Addresses Docker picks
// itself stay in the upper half, away from the hosts and the fixed
// container addresses; the gateway is an unused address, as nothing leaves
// the subnet.
func (Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	b, image, err := d.Engines(true)
	if err != nil {
		return nil, err
	}
	var eps []lab.Endpoint
	for _, h := range d.Hosts {
		if _, err := b.Network(h.Name, dockerNet, network.CreateOptions{Driver: "macvlan",
			Options: map[string]string{"parent": "eth0", "macvlan_mode": "bridge"},
			IPAM:    &network.IPAM{Config: []network.IPAMConfig{{Subnet: lab.Underlay, IPRange: "198.18.0.192/26", Gateway: "198.18.0.254"}}}}); err != nil {
			return nil, err
		}
		ip := lab.MacvlanIP(h.Index).String()
		sb, err := b.Sandbox(h.Name, image, dockerbuild.Attach{Network: dockerNet, IP: ip})
		if err != nil {
			return nil, err
		}
		info, err := b.Inspect(h.Name, dockerNet)
		if err != nil {
			return nil, err
		}
		addr := lab.HostPort(ip, d.Port)
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen: lab.HostPort("0.0.0.0", d.Port), External: addr, Internal: addr,
			Path:   []string{h.Name + ":eth0 (macvlan parent)", "container:eth0 (docker macvlan)"},
			Docker: docker.EndpointOf(sb, &info),
		})
	}
	return eps, nil
}
