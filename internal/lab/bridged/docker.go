package bridged

import (
	"net"

	"github.com/docker/docker/api/types/network"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
)

// DockerAttach starts the endpoint's sandbox on a user-defined bridge
// network named name of its host's engine, at its slot's address
// 198.19.i.(2+slot), publishing its slot's ports. The host's first
// endpoint creates the network on 198.19.i.0/24 (gateway .1) with the
// driver options opts. On a lab with IPv6 the network also has
// 2001:2:0:(1000+i)::/64 (gateway ::1, lab.HostBridge6), the sandbox
// lab.SlotIP6 there, and the ports are published on [::] too (only there
// on an IPv6-only lab).
func DockerAttach(d *docker.Build, b dockerbuild.B, image, name string, opts map[string]string, e lab.EndpointAt) (dockerbuild.Sandbox, *dockerbuild.NetworkInfo, net.IP, error) {
	h := e.Host
	fail := func(err error) (dockerbuild.Sandbox, *dockerbuild.NetworkInfo, net.IP, error) {
		return dockerbuild.Sandbox{}, nil, nil, err
	}
	c := d.Conditions
	if e.Slot == 0 {
		gw, _, subnet := lab.HostBridge(h.Index)
		create := network.CreateOptions{Driver: "bridge", Options: opts,
			IPAM: &network.IPAM{Config: []network.IPAMConfig{{Subnet: subnet, Gateway: lab.IP(gw).String()}}}}
		if c.HasIPv6() {
			// Docker 20.10's networks always have IPv4 too; an IPv6-only
			// lab's containers keep it unused on the bridge (nothing
			// dials it and the host has no IPv4 to reach it).
			gw6, _, subnet6 := lab.HostBridge6(h.Index)
			on := true
			create.EnableIPv6 = &on
			create.IPAM.Config = append(create.IPAM.Config, network.IPAMConfig{Subnet: subnet6, Gateway: lab.IP(gw6).String()})
		}
		if _, err := b.Network(h.Name, name, create); err != nil {
			return fail(err)
		}
	}
	ip := lab.SlotIP(h.Index, e.Slot)
	a := dockerbuild.Attach{Network: name, IP: ip.String(), Publish: d.PortsAt(e), Slot: e.Slot}
	if c.HasIPv6() {
		a.IP6, a.HostIP6, a.NoHostIP4 = lab.SlotIP6(h.Index, e.Slot).String(), "::", !c.HasIPv4()
	}
	sb, err := b.Sandbox(h.Name, image, a)
	if err != nil {
		return fail(err)
	}
	info, err := b.Inspect(h.Name, name)
	if err != nil {
		return fail(err)
	}
	return sb, &info, ip, nil
}
