package bare

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
)

// BuildDocker is Build: the reference needs no engine on either driver. On
// an existing engine the servers are plain processes on this machine. On
// engines on other machines cnperf can start nothing but containers, so
// the reference is the nearest of them to a plain process: the host's
// network, no seccomp or AppArmor (what made the docker driver's host mode
// cost more than the netns driver's, docs/docker.md).
func (Mode) BuildDocker(b *docker.Build) ([]lab.Endpoint, error) {
	switch {
	case b.Local:
		return docker.LocalEndpoints(b.Endpoints, b.Hosts, b.Port, false, nil, "bare"), nil
	case b.Remote:
		return remote(b)
	}
	return lab.HostEndpoints(b.Endpoints, b.Conditions, b.Port, false), nil
}

// remote starts an unconfined host-network sandbox per endpoint.
func remote(d *docker.Build) ([]lab.Endpoint, error) {
	b, image, err := d.Engines()
	if err != nil {
		return nil, err
	}
	return d.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		sb, err := b.Sandbox(h.Name, image, dockerbuild.Attach{Network: "host", Unconfined: true, Slot: e.Slot})
		if err != nil {
			return lab.Endpoint{}, err
		}
		addr := lab.HostPort(h.Addr, e.Port(d.Port))
		return lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen: lab.HostPort("0.0.0.0", e.Port(d.Port)), External: addr, Internal: addr,
			Path:   []string{h.Name + ":eth0 (remote engine: host network, no seccomp or AppArmor)"},
			Docker: docker.EndpointOf(sb, nil),
		}, nil
	})
}

// DockerFamilies: on emulated hosts the servers are plain processes on
// the hosts' NICs, which carry either family or both.
func (Mode) DockerFamilies() []string { return lab.EveryFamily() }

// SingleHost: the mode builds on one host alone, so it runs on an
// existing engine too (--docker-host).
func (Mode) SingleHost() bool { return true }
