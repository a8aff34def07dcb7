package flannel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
	"github.com/cnperf/cnperf/internal/lab/docker/engine"
)

// BuildDocker is the paper's setup itself: Flannel starts first (etcd,
// a flanneld per host, as on the netns driver), then each host's dockerd
// starts with the --bip and --mtu its flanneld leased and --ip-masq=false
// (flanneld masquerades what leaves its network, as mk-docker-opts.sh
// sets Docker up), and each endpoint's sandbox sits on docker0, Docker's
// default bridge, at the address Docker gives it, its ports published
// with docker -p.
func (m Mode) BuildDocker(d *docker.Build) ([]lab.Endpoint, error) {
	if d.Local || d.Remote {
		return nil, errors.New(m.Name() + ": flanneld runs on the lab's emulated hosts, beside the dockerd cnperf starts on each; it cannot set up an engine cnperf did not start")
	}
	envs, rec, err := m.start(d.Build, true)
	if err != nil {
		return nil, err
	}
	bridges := map[string]engine.Bridge{}
	for host, env := range envs {
		bridges[host] = engine.Bridge{IP: env.Subnet.String(), MTU: env.MTU, NoMasquerade: true}
	}
	b, image, err := d.EnginesBridged(bridges)
	if err != nil {
		return nil, err
	}
	eps, err := d.ByHost(func(e lab.EndpointAt) (lab.Endpoint, error) {
		h := e.Host
		sb, err := b.Sandbox(h.Name, image, dockerbuild.Attach{Network: "bridge", Publish: d.PortsAt(e), Slot: e.Slot})
		if err != nil {
			return lab.Endpoint{}, err
		}
		ip, err := bridgeIP(sb)
		if err != nil {
			return lab.Endpoint{}, err
		}
		if lease := envs[h.Name].Lease(); !lease.Contains(ip) {
			return lab.Endpoint{}, fmt.Errorf("docker gave the sandbox %s, outside the lease %s", ip, lease)
		}
		info, err := b.Inspect(h.Name, "bridge")
		if err != nil {
			return lab.Endpoint{}, err
		}
		p := e.Port(d.Port)
		return lab.Endpoint{
			Host: h.Name, NS: sb.NetNS, Container: true,
			Listen:   lab.HostPort("0.0.0.0", p),
			External: lab.HostPort(h.Addr, p),
			Internal: lab.HostPort(ip.String(), p),
			Path:     append([]string{"container:eth0", h.Name + ":docker0 (dockerd --bip, --mtu from flanneld)"}, m.hostPath(h.Name)...),
			Docker:   docker.EndpointOf(sb, &info),
		}, nil
	})
	if err != nil {
		return nil, err
	}
	d.Record().Flannel = rec
	return eps, nil
}

// bridgeIP is the sandbox's address on Docker's default bridge, which
// takes no fixed address: Docker picks it from --bip's subnet.
func bridgeIP(sb dockerbuild.Sandbox) (netip.Addr, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := sb.Engine.Client.ContainerInspect(ctx, sb.ID)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("inspect sandbox: %w", err)
	}
	if in.NetworkSettings == nil || in.NetworkSettings.Networks["bridge"] == nil {
		return netip.Addr{}, errors.New("the sandbox is not on docker0")
	}
	ip := net.ParseIP(in.NetworkSettings.Networks["bridge"].IPAddress).To4()
	if ip == nil {
		return netip.Addr{}, fmt.Errorf("the sandbox's docker0 address %q", in.NetworkSettings.Networks["bridge"].IPAddress)
	}
	a, _ := netip.AddrFromSlice(ip)
	return a, nil
}
