package bridge

import (
	"fmt"

	"github.com/docker/docker/api/types/network"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/bridged"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// dockerNet names the user-defined bridge network on each engine.
const dockerNet = "cnperf-bridge"

// BuildDocker makes a user-defined bridge network on each server's engine,
// on the subnet the netns driver uses, and publishes the lab's ports from
// the sandbox (docker run -p), with Docker's own iptables rules and
// userland proxy. A host's endpoints each have a sandbox at their slot's
// address publishing their slot's ports; they reach each other at the
// host's published ports, through Docker's hairpin (docker-proxy).
func (Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	b, image, err := d.Engines()
	if err != nil {
		return nil, err
	}
	if d.Local {
		return buildLocal(d, b, image, d.Publish)
	}
	return d.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		sb, info, _, err := bridged.DockerAttach(d, b, image, dockerNet, nil, e)
		if err != nil {
			return lab.Endpoint{}, err
		}
		v4, v6 := lab.HostAddrs(h)
		return lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Path:   []string{h.Name + ":eth0", dockerNAT(d.Conditions), h.Name + ":br-" + info.ID[:12], "container:eth0"},
			Docker: docker.EndpointOf(sb, info),
		}, d.Conditions, v4, v6, e.Port(d.Port)), nil
	})
}

// DockerFamilies: Docker's IPv6 on a user-defined network (--ipv6) with
// ip6tables on, which publishes ports with the same DNAT in ip6tables.
func (Mode) DockerFamilies() []string { return lab.EveryFamily() }

// dockerNAT names, in an endpoint's Path, the tables dockerd's published
// ports go through: ip6tables' where the workloads dial IPv6.
func dockerNAT(c conditions.Set) string {
	switch c.Family() {
	case conditions.IPv6:
		return "ip6tables DNAT (dockerd)"
	case conditions.Dual:
		return "ip6tables DNAT (dockerd; iptables for IPv4)"
	}
	return "iptables DNAT (dockerd)"
}

// LocalSubnet is the bridge network cnperf makes on an existing engine.
const LocalSubnet = "198.19.250.0/24"

// localFirst is the first sandbox's host number on LocalSubnet; the
// last one is .254.
const localFirst = 10

// buildLocal puts every sandbox on one user-defined bridge network of the
// existing engine, named after the lab: peers reach each other across the
// bridge, and the first endpoint's ports are published on loopback only
// (where siege reaches it), so nothing is exposed on the machine's network.
func buildLocal(d *docker.Build, b dockerbuild.B, image string, pub []dockerbuild.Port) ([]lab.Endpoint, error) {
	name := "cnperf-" + d.Lab
	if n := len(d.Endpoints); localFirst+n-1 > 254 {
		return nil, fmt.Errorf("%d endpoints: an existing engine's bridge network %s holds at most %d", n, LocalSubnet, 255-localFirst)
	}
	if _, err := b.Network(d.Hosts[0].Name, name, network.CreateOptions{Driver: "bridge",
		IPAM: &network.IPAM{Config: []network.IPAMConfig{{Subnet: LocalSubnet, Gateway: "198.19.250.1"}}}}); err != nil {
		return nil, err
	}
	var eps []lab.Endpoint
	for i, e := range d.Endpoints {
		h, port := e.Host, e.Port(d.Port)
		ip := fmt.Sprintf("198.19.250.%d", localFirst+i)
		a := dockerbuild.Attach{Network: name, IP: ip, Slot: e.Slot}
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

// SingleHost: the mode builds on one host alone, so it runs on an
// existing engine too (--docker-host).
func (Mode) SingleHost() bool { return true }
