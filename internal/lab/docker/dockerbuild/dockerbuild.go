// Package dockerbuild holds the building blocks modes use on the docker
// driver, as netdev holds those of the netns driver: engines on hosts with
// the workload image, labelled networks, and sandbox containers. A sandbox
// is a container running `cnperf pause` that owns a network attachment and
// published ports, as Kubernetes' pause container owns a pod's; servers
// then run as containers in its network namespace and clients as execs in
// it, so each keeps its own cgroup while all share the sandbox's network.
package dockerbuild

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/go-connections/nat"

	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/record"
)

// callTimeout bounds one step's API calls; attaching to an overlay waits
// on the swarm manager.
const callTimeout = 60 * time.Second

// B binds the blocks to a lab's engines and the binary its image holds.
type B struct {
	Set *engine.Set
	Exe string
	// CPUs pins every sandbox the blocks make (the cores condition).
	CPUs []int
}

// Start runs an engine on every host that has none yet and makes the
// workload image on each; it returns the image reference.
func (b B) Start(hosts []engine.Host) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*callTimeout)
	defer cancel()
	if err := b.Set.Start(ctx, hosts); err != nil {
		return "", err
	}
	var ref string
	for _, h := range hosts {
		e := b.Set.Engine(h.Name)
		r, err := engine.ImportImage(ctx, e.Client, b.Exe)
		if err != nil {
			return "", fmt.Errorf("engine on %s: %w", h.Name, err)
		}
		ref = r
	}
	return ref, nil
}

func (b B) engine(host string) (*engine.Engine, error) {
	e := b.Set.Engine(host)
	if e == nil {
		return nil, fmt.Errorf("no engine on host %s", host)
	}
	return e, nil
}

// Network creates a network on host's engine, labelled as the lab's, and
// returns its ID.
func (b B) Network(host, name string, opts network.CreateOptions) (string, error) {
	e, err := b.engine(host)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if opts.Labels == nil {
		opts.Labels = map[string]string{}
	}
	opts.Labels[engine.LabLabel] = b.Set.Lab
	r, err := e.Client.NetworkCreate(ctx, name, opts)
	if err != nil {
		return "", fmt.Errorf("create network %s on %s: %w", name, host, err)
	}
	if err := b.Set.RecordNetwork(r.ID); err != nil {
		return "", err
	}
	return r.ID, nil
}

// Attach says how a sandbox joins the network: a network mode ("host", or
// a network's name) with an optional fixed address, and the ports to
// publish on the host (docker run -p PORT:PORT/PROTO).
type Attach struct {
	Network string
	IP      string
	// IP6 is the sandbox's fixed IPv6 address on a network with IPv6.
	IP6     string
	Publish []Port
	HostIP  string // where published ports bind on the host; default 0.0.0.0
	// HostIP6 also binds the published ports there (e.g. "::"), reached at
	// the host's IPv6 address; with IPv4 gone (NoHostIP4) only there.
	HostIP6   string
	NoHostIP4 bool
	// CPUs pins the sandbox (and so the clients exec'd in it), the cores
	// condition; nil takes B's.
	CPUs []int
	// Unconfined runs the sandbox (and the servers that join its
	// namespaces inherit nothing of it) without seccomp and AppArmor.
	Unconfined bool
	// Slot is the endpoint's among its host's (lab.EndpointAt.Slot): it
	// names the sandbox, so that a host's several sandboxes stay apart.
	Slot int
}

// bindings are where a's published port binds on the host: HostIP
// (0.0.0.0 by default) unless NoHostIP4, and HostIP6 when set.
func bindings(a Attach, port string) []nat.PortBinding {
	var out []nat.PortBinding
	if !a.NoHostIP4 {
		out = append(out, nat.PortBinding{HostIP: cmp.Or(a.HostIP, "0.0.0.0"), HostPort: port})
	}
	if a.HostIP6 != "" {
		out = append(out, nat.PortBinding{HostIP: a.HostIP6, HostPort: port})
	}
	return out
}

// SandboxName names a host's sandbox in a slot: cnperf-LAB-HOST-sandbox for
// slot 0, as a host's only sandbox always was, then -sandbox1, -sandbox2, ...
// Named by lab, host and slot: one engine may hold several labs' sandboxes.
func SandboxName(lab, host string, slot int) string {
	name := "cnperf-" + lab + "-" + host + "-sandbox"
	if slot > 0 {
		name += strconv.Itoa(slot)
	}
	return name
}

// Cpuset writes CPUs as Docker's --cpuset-cpus takes them ("" for any).
func Cpuset(cpus []int) string {
	var parts []string
	for _, c := range cpus {
		parts = append(parts, strconv.Itoa(c))
	}
	return strings.Join(parts, ",")
}

// Port is a port to publish (a lab's, as its record keeps them).
type Port = record.Port

// Shifted returns ports moved by shift (an endpoint's slot, EndpointAt.Shift).
func Shifted(ports []Port, shift int) []Port {
	out := make([]Port, len(ports))
	for i, p := range ports {
		out[i] = Port{Number: p.Number + shift, Protocol: p.Protocol}
	}
	return out
}

// Sandbox is a running sandbox container.
type Sandbox struct {
	Engine *engine.Engine
	ID     string
	PID    int    // its process, in the root pid namespace (0 on a remote engine)
	NetNS  string // /proc/PID/ns/net ("" on a remote engine)
	Image  string
}

// Sandbox starts the sandbox container of host.
func (b B) Sandbox(host, image string, a Attach) (Sandbox, error) {
	e, err := b.engine(host)
	if err != nil {
		return Sandbox{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cfg := &container.Config{Image: image, Cmd: []string{"pause"},
		Labels: map[string]string{engine.LabLabel: b.Set.Lab, "cnperf.role": "sandbox"}}
	cpus := a.CPUs
	if cpus == nil {
		cpus = b.CPUs
	}
	hc := &container.HostConfig{NetworkMode: container.NetworkMode(a.Network),
		Resources: container.Resources{CpusetCpus: Cpuset(cpus)}}
	if a.Unconfined {
		hc.SecurityOpt = []string{"seccomp=unconfined", "apparmor=unconfined"}
	}
	if len(a.Publish) > 0 {
		cfg.ExposedPorts = nat.PortSet{}
		hc.PortBindings = nat.PortMap{}
		for _, p := range a.Publish {
			port := nat.Port(strconv.Itoa(p.Number) + "/" + p.Protocol)
			cfg.ExposedPorts[port] = struct{}{}
			hc.PortBindings[port] = bindings(a, strconv.Itoa(p.Number))
		}
	}
	var nc *network.NetworkingConfig
	if a.IP != "" || a.IP6 != "" {
		nc = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			a.Network: {IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: a.IP, IPv6Address: a.IP6}},
		}}
	}
	r, err := e.Client.ContainerCreate(ctx, cfg, hc, nc, nil, SandboxName(b.Set.Lab, host, a.Slot))
	if err != nil {
		return Sandbox{}, fmt.Errorf("create sandbox on %s: %w", host, err)
	}
	if err := e.Client.ContainerStart(ctx, r.ID, container.StartOptions{}); err != nil {
		return Sandbox{}, fmt.Errorf("start sandbox on %s: %w", host, err)
	}
	in, err := e.Client.ContainerInspect(ctx, r.ID)
	if err != nil {
		return Sandbox{}, fmt.Errorf("inspect sandbox on %s: %w", host, err)
	}
	if in.State == nil || in.State.Pid == 0 {
		return Sandbox{}, fmt.Errorf("sandbox on %s is not running", host)
	}
	if e.Remote {
		// Its process is another machine's: nothing here to enter.
		return Sandbox{Engine: e, ID: r.ID, Image: image}, nil
	}
	return Sandbox{Engine: e, ID: r.ID, PID: in.State.Pid, NetNS: fmt.Sprintf("/proc/%d/ns/net", in.State.Pid), Image: image}, nil
}

// NetworkInfo is record.NetworkInfo: stored with the run.
type NetworkInfo = record.NetworkInfo

// Inspect describes a network as host's engine sees it.
func (b B) Inspect(host, name string) (NetworkInfo, error) {
	e, err := b.engine(host)
	if err != nil {
		return NetworkInfo{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	n, err := e.Client.NetworkInspect(ctx, name, network.InspectOptions{})
	if err != nil {
		return NetworkInfo{}, fmt.Errorf("inspect network %s on %s: %w", name, host, err)
	}
	info := NetworkInfo{Name: n.Name, ID: n.ID, Driver: n.Driver, Scope: n.Scope, Options: n.Options}
	for _, c := range n.IPAM.Config {
		info.Subnets = append(info.Subnets, c.Subnet)
	}
	return info, nil
}

// RouteOnLink routes each of cidrs out of the sandbox's device dev with no
// gateway: Docker routes only its network's own subnets, and a macvlan
// endpoint past slot 0 sits on another subnet of the same link
// (lab.SlotRange). cnperf enters the sandbox's namespace from outside, so
// the sandbox needs no capability.
func RouteOnLink(lab string, sb Sandbox, dev string, cidrs ...string) error {
	if sb.NetNS == "" {
		return fmt.Errorf("sandbox %.12s is on another machine's engine: cnperf cannot add its routes", sb.ID)
	}
	nb := netdev.B{Lab: lab}
	for _, cidr := range cidrs {
		if err := nb.RouteDev(sb.NetNS, cidr, dev); err != nil {
			return fmt.Errorf("sandbox %.12s: %w", sb.ID, err)
		}
	}
	return nil
}
