package links

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/bridged"
	"github.com/cnperf/cnperf/internal/lab/docker"
)

// dockerNet names the links mode's bridge network.
const dockerNet = "cnperf-links"

// BuildDocker puts every endpoint's sandbox on one bridge network of the
// one host's engine, as `docker run --link` put containers on docker0:
// Docker forwards between containers of a bridge without NAT, so peers
// dial each other's own address; a client outside reaches an endpoint at
// its published port. The network is user-defined only because Docker
// gives fixed addresses (the netns driver's 198.19.i.(2+slot)) on those
// alone; legacy links add names, not a datapath.
func (Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	if err := OneHost(d.Build); err != nil {
		return nil, err
	}
	b, image, err := d.Engines()
	if err != nil {
		return nil, err
	}
	return d.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		sb, info, ip, err := bridged.DockerAttach(d, b, image, dockerNet, nil, e)
		if err != nil {
			return lab.Endpoint{}, err
		}
		p := e.Port(d.Port)
		return lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen:   lab.HostPort("0.0.0.0", p),
			External: lab.HostPort(h.Addr, p),
			Internal: lab.HostPort(ip.String(), p),
			Path:     []string{"container:eth0", h.Name + ":br-" + info.ID[:12] + " (docker bridge, no NAT between containers)"},
			Docker:   docker.EndpointOf(sb, info),
		}, nil
	})
}
