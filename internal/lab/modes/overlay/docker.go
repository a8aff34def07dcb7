package overlay

import (
	"context"

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
func (Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	b, image, err := d.Engines(true)
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
	if _, err := b.Network(servers[0].Name, dockerNet, network.CreateOptions{Driver: "overlay", Attachable: true,
		IPAM: &network.IPAM{Config: []network.IPAMConfig{{Subnet: lab.OverlaySubnet, IPRange: "198.19.200.128/25", Gateway: "198.19.200.254"}}}}); err != nil {
		return nil, err
	}
	pub := d.Ports()
	var eps []lab.Endpoint
	for _, h := range servers {
		ip := lab.OverlayIP(h.Index).String()
		sb, err := b.Sandbox(h.Name, image, dockerbuild.Attach{Network: dockerNet, IP: ip, Publish: pub})
		if err != nil {
			return nil, err
		}
		info, err := b.Inspect(h.Name, dockerNet)
		if err != nil {
			return nil, err
		}
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen:   lab.HostPort("0.0.0.0", port),
			External: lab.HostPort(h.Addr, port),
			Internal: lab.HostPort(ip, port),
			Path:     []string{"container:eth0", h.Name + ":docker overlay " + dockerNet + " (VXLAN, UDP 4789)", h.Name + ":eth0"},
			Docker:   docker.EndpointOf(sb, &info),
		})
	}
	return eps, nil
}
