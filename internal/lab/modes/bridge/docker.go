package bridge

import (
	"fmt"

	"github.com/docker/docker/api/types/network"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
)

// dockerNet names the user-defined bridge network on each engine.
const dockerNet = "cnperf-bridge"

// BuildDocker makes a user-defined bridge network on each server's engine,
// on the subnet the netns driver uses, and publishes the lab's ports from
// the sandbox (docker run -p), with Docker's own iptables rules and
// userland proxy.
func (Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	b, image, err := d.Engines(false)
	if err != nil {
		return nil, err
	}
	pub := d.Ports()
	if d.Local {
		return buildLocal(d, b, image, pub)
	}
	var eps []lab.Endpoint
	for _, h := range d.Hosts {
		gw, ctr, subnet := lab.HostBridge(h.Index)
		if _, err := b.Network(h.Name, dockerNet, network.CreateOptions{Driver: "bridge",
			IPAM: &network.IPAM{Config: []network.IPAMConfig{{Subnet: subnet, Gateway: lab.IP(gw).String()}}}}); err != nil {
			return nil, err
		}
		sb, err := b.Sandbox(h.Name, image, dockerbuild.Attach{Network: dockerNet, IP: lab.IP(ctr).String(), Publish: pub})
		if err != nil {
			return nil, err
		}
		info, err := b.Inspect(h.Name, dockerNet)
		if err != nil {
			return nil, err
		}
		addr := lab.HostPort(h.Addr, d.Port)
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen: lab.HostPort("0.0.0.0", d.Port), External: addr, Internal: addr,
			Path:   []string{h.Name + ":eth0", "iptables DNAT (dockerd)", h.Name + ":br-" + info.ID[:12], "container:eth0"},
			Docker: docker.EndpointOf(sb, &info),
		})
	}
	return eps, nil
}

// LocalSubnet is the bridge network cnperf makes on an existing engine.
const LocalSubnet = "198.19.250.0/24"

// buildLocal puts every sandbox on one user-defined bridge network of the
// existing engine, named after the lab: peers reach each other across the
// bridge, and the first server's ports are published on loopback only
// (where siege reaches it), so nothing is exposed on the machine's network.
func buildLocal(d *docker.Build, b dockerbuild.B, image string, pub []dockerbuild.Port) ([]lab.Endpoint, error) {
	name := "cnperf-" + d.Lab
	servers, port := d.Hosts, d.Port
	if _, err := b.Network(servers[0].Name, name, network.CreateOptions{Driver: "bridge",
		IPAM: &network.IPAM{Config: []network.IPAMConfig{{Subnet: LocalSubnet, Gateway: "198.19.250.1"}}}}); err != nil {
		return nil, err
	}
	var eps []lab.Endpoint
	for i, h := range servers {
		ip := fmt.Sprintf("198.19.250.%d", 10+i)
		a := dockerbuild.Attach{Network: name, IP: ip}
		if i == 0 {
			a.Publish, a.HostIP = pub, "127.0.0.1"
		}
		sb, err := b.Sandbox(h.Name, image, a)
		if err != nil {
			return nil, err
		}
		info, err := b.Inspect(h.Name, name)
		if err != nil {
			return nil, err
		}
		internal := lab.HostPort(ip, port)
		external := internal
		if i == 0 {
			external = lab.HostPort("127.0.0.1", port)
		}
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen: lab.HostPort("0.0.0.0", port), External: external, Internal: internal,
			Path:   []string{"lo", "published port (docker-proxy or DNAT)", "br-" + info.ID[:12], "container:eth0"},
			Docker: docker.EndpointOf(sb, &info),
		})
	}
	return eps, nil
}
