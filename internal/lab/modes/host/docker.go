package host

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
)

// BuildDocker runs each endpoint's sandbox with --net=host on its host's
// engine: its containers share the host's network stack, so a host's
// endpoints are told apart by their slot's ports.
func (Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	b, image, err := d.Engines()
	if err != nil {
		return nil, err
	}
	sandboxes := make([]*lab.DockerEndpoint, len(d.Endpoints))
	slot := map[lab.EndpointAt]int{}
	for i, e := range d.Endpoints {
		slot[e] = i
	}
	eps, err := d.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		sb, err := b.Sandbox(h.Name, image, dockerbuild.Attach{Network: "host", Slot: e.Slot})
		if err != nil {
			return lab.Endpoint{}, err
		}
		sandboxes[slot[e]] = docker.EndpointOf(sb, nil)
		v4, v6 := lab.HostAddrs(h)
		return lab.Addressed(lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Path:   []string{h.Name + ":eth0 (docker --net=host)"},
			Docker: sandboxes[slot[e]],
		}, d.Conditions, v4, v6, e.Port(d.Port)), nil
	})
	if err != nil {
		return nil, err
	}
	if d.Local {
		return docker.LocalEndpoints(d.Endpoints, d.Hosts, d.Port, true, sandboxes, "docker --net=host"), nil
	}
	return eps, nil
}

// DockerFamilies: the sandboxes share their hosts' stacks, which carry
// either family or both.
func (Mode) DockerFamilies() []string { return lab.EveryFamily() }

// SingleHost: the mode builds on one host alone, so it runs on an
// existing engine too (--docker-host).
func (Mode) SingleHost() bool { return true }
