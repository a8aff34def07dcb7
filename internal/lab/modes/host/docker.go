package host

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
)

// BuildDocker runs each server's sandbox with --net=host on the host's
// engine: its containers share the host's network stack.
func (Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	b, image, err := d.Engines(false)
	if err != nil {
		return nil, err
	}
	var eps []lab.Endpoint
	var local []*lab.DockerEndpoint
	for _, h := range d.Hosts {
		sb, err := b.Sandbox(h.Name, image, dockerbuild.Attach{Network: "host"})
		if err != nil {
			return nil, err
		}
		if d.Local {
			local = append(local, docker.EndpointOf(sb, nil))
			continue
		}
		addr := lab.HostPort(h.Addr, d.Port)
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen: lab.HostPort("0.0.0.0", d.Port), External: addr, Internal: addr,
			Path:   []string{h.Name + ":eth0 (docker --net=host)"},
			Docker: docker.EndpointOf(sb, nil),
		})
	}
	if d.Local {
		return docker.LocalEndpoints(d.Hosts, d.Port, true, local, "docker --net=host"), nil
	}
	return eps, nil
}
