package bridge

import (
	"github.com/docker/docker/api/types/network"

	"github.com/cnperf/cnperf/internal/dockerbuild"
	"github.com/cnperf/cnperf/internal/lab"
)

// dockerNet names the user-defined bridge network on each engine.
const dockerNet = "cnperf-bridge"

// BuildDocker makes a user-defined bridge network on each server's engine,
// on the subnet the netns driver uses, and publishes the lab's ports from
// the sandbox (docker run -p), with Docker's own iptables rules and
// userland proxy.
func (Mode) BuildDocker(l *lab.Lab, servers []lab.Host, port int) ([]lab.Endpoint, error) {
	b := l.DockerBuilder()
	image, err := b.Start(lab.EngineHosts(servers))
	if err != nil {
		return nil, err
	}
	var pub []dockerbuild.Port
	for _, p := range l.Publish {
		pub = append(pub, dockerbuild.Port{Number: p.Number, Protocol: p.Protocol})
	}
	var eps []lab.Endpoint
	for _, h := range servers {
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
		addr := lab.HostPort(h.Addr, port)
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen: lab.HostPort("0.0.0.0", port), External: addr, Internal: addr,
			Path:   []string{h.Name + ":eth0", "iptables DNAT (dockerd)", h.Name + ":br-" + info.ID[:12], "container:eth0"},
			Docker: lab.DockerEndpointOf(sb, &info),
		})
	}
	return eps, nil
}
