package bridgerouted

import (
	"errors"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/bridged"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/routed"
)

// dockerNet names the mode's bridge network on each engine.
const dockerNet = "cnperf-routed"

// noMasquerade is Docker's bridge option that leaves containers' own
// addresses on what they send.
var noMasquerade = map[string]string{"com.docker.network.bridge.enable_ip_masquerade": "false"}

// BuildDocker puts each endpoint's sandbox on a bridge network of its
// host's engine at 198.19.i.(2+slot), without masquerade, and has every
// other host route 198.19.i.0/24 to host i: Docker 20.10 has no routed
// gateway mode (gateway_mode_ipv4=routed came with 27), so this is what it
// offers for it. The lab's ports are still published, only because 20.10
// drops forwarded traffic to a container (FORWARD policy DROP) unless its
// DOCKER chain accepts the port, which publishing adds; peers and clients
// dial the container's own address, which no DNAT rule matches.
func (Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	if d.Remote {
		return nil, errors.New("bridge-routed: every host needs routes to the other hosts' container subnets, which cnperf adds only on hosts it emulates")
	}
	b, image, err := d.Engines()
	if err != nil {
		return nil, err
	}
	eps, err := d.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		sb, info, ip, err := bridged.DockerAttach(d, b, image, dockerNet, noMasquerade, e)
		if err != nil {
			return lab.Endpoint{}, err
		}
		addr := lab.HostPort(ip.String(), e.Port(d.Port))
		return lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen: lab.HostPort("0.0.0.0", e.Port(d.Port)), External: addr, Internal: addr,
			Path:   []string{h.Name + ":eth0", h.Name + " routing (no NAT)", h.Name + ":br-" + info.ID[:12], "container:eth0"},
			Docker: docker.EndpointOf(sb, info),
		}, nil
	})
	if err != nil {
		return nil, err
	}
	if err := routed.RouteHosts(d.Build); err != nil {
		return nil, err
	}
	return eps, nil
}
