package host

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
)

// BuildDocker runs each server's sandbox with --net=host on the host's
// engine: its containers share the host's network stack.
func (Mode) BuildDocker(l *lab.Lab, servers []lab.Host, port int) ([]lab.Endpoint, error) {
	b, image, err := l.StartEngines(servers, false)
	if err != nil {
		return nil, err
	}
	var eps []lab.Endpoint
	var local []*lab.DockerEndpoint
	for _, h := range servers {
		sb, err := b.Sandbox(h.Name, image, dockerbuild.Attach{Network: "host"})
		if err != nil {
			return nil, err
		}
		if l.Local {
			local = append(local, lab.DockerEndpointOf(sb, nil))
			continue
		}
		addr := lab.HostPort(h.Addr, port)
		eps = append(eps, lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen: lab.HostPort("0.0.0.0", port), External: addr, Internal: addr,
			Path:   []string{h.Name + ":eth0 (docker --net=host)"},
			Docker: lab.DockerEndpointOf(sb, nil),
		})
	}
	if l.Local {
		return lab.LocalEndpoints(servers, port, true, local, "docker --net=host"), nil
	}
	return eps, nil
}
