// Package docker is the driver that builds modes with real Docker Engines:
// one dockerd per emulated host (the netns driver's hosts and switch),
// started inside the host's namespace, or an existing engine
// (--docker-host), where every host is this machine. Modes make Docker's
// own networks and a sandbox container per host instead of devices by hand.
package docker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Name is the driver's name.
const Name = "docker"

// Mode is a mode the docker driver can build: on the lab's engines, with
// Docker's own networks and containers.
type Mode interface {
	lab.Mode
	// BuildDocker sets up an endpoint (a sandbox container) on each of
	// b.Hosts to serve on b.Port and returns them, in order.
	BuildDocker(b *Build) ([]lab.Endpoint, error)
}

// Build is the handle a mode builds with on this driver: the lab's Build
// plus its engines.
type Build struct {
	*lab.Build
	// Local is set on an existing engine: every host is this machine.
	Local bool
	// Remote is set on engines on other machines (lab.Config.Engines):
	// cnperf reaches them only through their API, so it touches nothing
	// on those machines outside their engines (no routes, no namespaces).
	Remote bool
	set    *engine.Set
	exe    string
	single bool // the mode builds on one host alone
}

// ErrSingleEngine is what a mode that spans hosts says on an existing
// engine, which is one host.
var ErrSingleEngine = errors.New("needs emulated hosts, a dockerd each; on an existing engine (--docker-host) only modes on a single host run")

// Engines starts the engines of the hosts that carry endpoints, with the
// workload image, and returns the building blocks and the image. A mode
// that spans hosts (not lab.SingleHost) is refused on an existing engine.
func (b *Build) Engines() (dockerbuild.B, string, error) { return b.EnginesBridged(nil) }

// EnginesBridged is Engines with each host's docker0 as bridges says, by
// host name (a network plugin's lease: Flannel's --bip and --mtu); hosts
// it does not name keep the default.
func (b *Build) EnginesBridged(bridges map[string]engine.Bridge) (dockerbuild.B, string, error) {
	if b.Local && !b.single {
		return dockerbuild.B{}, "", ErrSingleEngine
	}
	if b.Local && len(bridges) > 0 {
		return dockerbuild.B{}, "", errors.New("an existing engine's docker0 is its own: cnperf cannot set it")
	}
	db := dockerbuild.B{Set: b.set, Exe: b.exe, CPUs: b.Conditions.HostCPUs()}
	var hosts []engine.Host
	for _, h := range b.Hosts {
		hosts = append(hosts, engine.Host{Name: h.Name, NS: h.NS, Addr: h.Addr, Bridge: bridges[h.Name], IPv6: b.Conditions.HasIPv6()})
	}
	image, err := db.Start(hosts)
	return db, image, err
}

// PortsAt returns the ports an endpoint publishes: the lab's, shifted for
// its slot, so that a host's sandboxes publish ports of their own.
func (b *Build) PortsAt(e lab.EndpointAt) []dockerbuild.Port {
	return dockerbuild.Shifted(b.Publish, e.Shift)
}

// EndpointOf describes a sandbox for an Endpoint.
func EndpointOf(sb dockerbuild.Sandbox, net *dockerbuild.NetworkInfo) *lab.DockerEndpoint {
	return &lab.DockerEndpoint{DockerHost: sb.Engine.DockerHost(), Version: sb.Engine.Version, API: sb.Engine.API,
		Sandbox: sb.ID, SandboxPID: sb.PID, Image: sb.Image, CgroupParent: sb.Engine.CgroupParent, Network: net}
}

// LocalEndpoints returns, for a lab on an existing engine, endpoints in
// this machine's own network namespace: listening on loopback only (the
// machine's real network sees nothing) and on a port of their own each,
// as they share one stack: the i-th host's port+i, shifted for the slot
// (Check allows several endpoints on a host only when one host has any).
// docker holds each endpoint's sandbox, in at's order, or is nil.
func LocalEndpoints(at []lab.EndpointAt, hosts []lab.Host, port int, container bool, docker []*lab.DockerEndpoint, path string) []lab.Endpoint {
	ordinal := map[string]int{}
	for i, h := range hosts {
		ordinal[h.Name] = i
	}
	var eps []lab.Endpoint
	for i, e := range at {
		h := e.Host
		addr := lab.HostPort("127.0.0.1", e.Port(port)+ordinal[h.Name])
		ep := lab.Endpoint{Host: h.Name, NS: h.NS, Container: container, Listen: addr, External: addr, Internal: addr,
			Path: []string{"lo (" + path + ")"}}
		if docker != nil {
			// The engine's own namespace: the machine's, for a user's engine.
			ep.Docker, ep.NS = docker[i], fmt.Sprintf("/proc/%d/ns/net", docker[i].SandboxPID)
		}
		eps = append(eps, ep)
	}
	return eps
}

// Driver is the docker driver.
type Driver struct{ lab.BaseDriver }

// Families is a Mode whose Docker build carries more than IPv4:
// DockerFamilies lists the ip_family values (conditions.IPv4, IPv6, Dual)
// its BuildDocker builds on emulated hosts. A mode without it carries IPv4
// only on this driver, whatever it carries on the netns driver.
type Families interface {
	DockerFamilies() []string
}

// dockerFamilies are the ip_family values m's Docker build carries.
func dockerFamilies(m lab.Mode) []string {
	if f, ok := m.(Families); ok {
		return f.DockerFamilies()
	}
	return []string{conditions.IPv4}
}

// CheckFamily refuses, before any lab is built, an ip_family the mode's
// Docker build does not carry (Families) and an IPv6 the kernel lacks.
func (Driver) CheckFamily(m lab.Mode, c conditions.Set) error {
	f := c.Family()
	if fs := dockerFamilies(m); !slices.Contains(fs, f) {
		return fmt.Errorf("lab: ip_family %s: mode %s carries %s only on the %s driver", f, m.Name(), strings.Join(fs, " and "), Name)
	}
	return lab.KernelIPv6("/proc/sys", c)
}

// errEngineFamily: cnperf gives IPv6 only to hosts it emulates; an
// existing engine's or another machine's networks and addresses are the
// user's.
const errEngineFamily = "lab: ip_family %s: the docker driver builds IPv6 on the hosts it emulates only, not on an existing engine (--docker-host) or other machines' (engines:)"

// checkEngineFamily refuses IPv6 on engines cnperf did not start.
func checkEngineFamily(o Options, c conditions.Set) error {
	if c.HasIPv6() && (o.DockerHost != "" || len(o.Engines) > 0) {
		return fmt.Errorf(errEngineFamily, c.Family())
	}
	return nil
}

// Builds reports whether the mode has a Docker build (BuildDocker): the
// user-space overlays, for one, have none.
func (Driver) Builds(m lab.Mode) bool { _, ok := m.(Mode); return ok }

func (Driver) Name() string { return Name }

// Validate refuses a mode without BuildDocker, a binary that cannot be the
// image, conditions or mixed placements on a user's engine, a mode that
// spans hosts on it, and a lab that exists. Each endpoint gets a sandbox of
// its own, several per host too. For engines on other machines it refuses
// what only emulated hosts allow (conditions) and, each in one line, a
// host with endpoints and no engine and an engine that does not answer.
func (d Driver) Validate(cfg lab.Config) error {
	o := options(cfg)
	if err := checkEngineFamily(o, cfg.Conditions); err != nil {
		return err
	}
	remote := len(o.Engines) > 0
	switch {
	case remote && o.DockerHost != "":
		return errors.New("lab: engines: and --docker-host both say where the engines are: give one")
	case remote && !cfg.Conditions.Empty():
		return errors.New("lab: engines: conditions (cores, bandwidth, ...) change the hosts, which are the engines' own machines: cnperf changes only hosts it emulates")
	case o.DockerHost != "" && !cfg.Conditions.Empty():
		// An existing engine's host is the user's machine: cnperf shapes
		// and tunes only what it built.
		return errors.New("lab: conditions (cores, bandwidth, ...) change the hosts, which on an existing engine is the user's machine: use emulated hosts")
	case !d.Builds(cfg.Mode):
		return fmt.Errorf("lab: mode %s cannot be built on the %s driver", cfg.Mode.Name(), Name)
	}
	if !remote {
		if err := d.CheckFamily(cfg.Mode, cfg.Conditions); err != nil {
			return err
		}
	}
	if o.DockerHost != "" {
		if !lab.IsSingleHost(cfg.Mode) {
			return fmt.Errorf("lab: mode %s %v", cfg.Mode.Name(), ErrSingleEngine)
		}
		if err := checkLocalSlots(cfg.Topology); err != nil {
			return err
		}
	}
	if cfg.Exe == "" {
		return errors.New("lab: the docker driver needs the cnperf binary for its image")
	}
	if remote {
		if err := CheckEngines(context.Background(), cfg.Topology, o.Engines, o.TLS); err != nil {
			return err
		}
	} else if err := engine.Usable(cfg.Exe); err != nil {
		return err
	}
	if _, err := os.Stat(engine.RunDir(cfg.Name)); err == nil {
		return fmt.Errorf("lab %s already exists; remove it with `cnperf lab down %s`", cfg.Name, cfg.Name)
	}
	if remote || o.DockerHost != "" {
		return nil
	}
	return netns.CheckFree(cfg.Name)
}

// Up builds the emulated hosts and has the mode start an engine on each
// host it uses, then applies the lab's congestion control and conditions;
// or, with a docker host, uses that engine.
func (Driver) Up(l *lab.Lab, cfg lab.Config) error {
	if o := options(cfg); o.DockerHost != "" {
		return upLocal(l, cfg, o.DockerHost)
	} else if len(o.Engines) > 0 {
		return upRemote(l, cfg, o)
	}
	if err := netns.UpHosts(l, cfg); err != nil {
		return err
	}
	set := engine.NewSet(l.Name, l.Switch, cfg.Owner.String())
	rt := newRuntime(l, set, lab.Sight{Local: true, Own: true})
	rt.local.PlanFlaps(l, cfg.Links)
	l.Runtime = rt
	b := &Build{Build: l.NewBuild(), set: set, exe: cfg.Exe, single: lab.IsSingleHost(cfg.Mode)}
	eps, err := cfg.Mode.(Mode).BuildDocker(b)
	if err != nil {
		return fmt.Errorf("build mode %s: %w", l.Mode, err)
	}
	l.Endpoints = eps
	return netns.Finish(l, b.Hosts, nil)
}

// upLocal builds a lab on an existing engine: no namespaces, every host is
// this machine (its own network namespace, loopback), and the mode makes
// only labelled containers and networks on the engine.
func upLocal(l *lab.Lab, cfg lab.Config, dockerHost string) error {
	l.Local, l.DockerHost = true, dockerHost
	self := fmt.Sprintf("/proc/%d/ns/net", os.Getpid())
	var names []string
	for i, spec := range cfg.Topology.Hosts {
		l.Hosts = append(l.Hosts, lab.Host{Name: spec.Name, Index: i + 1, NS: self, Addr: "127.0.0.1"})
		names = append(names, spec.Name)
	}
	set := engine.NewSet(l.Name, "", cfg.Owner.String())
	if err := set.UseExisting(context.Background(), dockerHost, names); err != nil {
		return err
	}
	l.Runtime = newRuntime(l, set, lab.Sight{Local: true, Own: false})
	b := &Build{Build: l.NewBuild(), Local: true, set: set, exe: cfg.Exe, single: lab.IsSingleHost(cfg.Mode)}
	eps, err := cfg.Mode.(Mode).BuildDocker(b)
	if err != nil {
		return fmt.Errorf("build mode %s on %s: %w", l.Mode, dockerHost, err)
	}
	l.Endpoints = eps
	return nil
}

// CheckEngines says, in one line naming the spec's field, which host of
// the topology that carries endpoints has no engine, which engine names
// no host of it, and which engine does not answer.
func CheckEngines(ctx context.Context, t lab.Topology, engines map[string]string, tls *engine.TLS) error {
	hosts := map[string]bool{}
	var names []string
	for _, h := range t.Hosts {
		hosts[h.Name] = true
		names = append(names, h.Name)
		if _, ok := engines[h.Name]; !ok && len(h.Endpoints) > 0 {
			return fmt.Errorf("engines.hosts: host %s carries endpoints and has no engine", h.Name)
		}
	}
	for _, h := range slices.Sorted(maps.Keys(engines)) {
		if !hosts[h] {
			return fmt.Errorf("engines.hosts.%s: the lab has no such host (hosts: %s)", h, strings.Join(names, ", "))
		}
	}
	for _, h := range slices.Sorted(maps.Keys(engines)) {
		if err := engine.Ping(ctx, engines[h], tls); err != nil {
			return fmt.Errorf("engines.hosts.%s: %w", h, err)
		}
	}
	return nil
}

// EngineWarnings are the lines to print before a run on engines: one per
// engine reached over plain tcp:// on another machine (engine.Warning).
// Nothing is dialled; an engine that cannot be resolved is CheckEngines'
// to refuse.
func EngineWarnings(engines map[string]string, tls *engine.TLS) []string {
	var out []string
	for _, h := range slices.Sorted(maps.Keys(engines)) {
		t, err := engine.Resolve(engines[h], tls, os.Getenv)
		if err != nil {
			continue
		}
		if w := engine.Warning(t); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// checkLocalSlots refuses, on an existing engine (one stack for every
// host), several endpoints on a host when several hosts carry endpoints:
// the hosts' ports (port+i) and the slots' shifts would meet.
func checkLocalSlots(t lab.Topology) error {
	var used, crowded []string
	for _, h := range t.Hosts {
		if len(h.Endpoints) > 0 {
			used = append(used, h.Name)
		}
		if len(h.Endpoints) > 1 {
			crowded = append(crowded, h.Name)
		}
	}
	if len(crowded) > 0 && len(used) > 1 {
		return fmt.Errorf("lab: host %s has several endpoints and hosts %s all carry some; on an existing engine (--docker-host), several endpoints per host need them all on one host", crowded[0], strings.Join(used, ", "))
	}
	return nil
}

// upRemote builds a lab on engines on other machines: a host with
// endpoints is its engine's machine, at that machine's address (the
// engine URL's host), and has no namespace here; a host without (ping-pong's
// siege) is this machine, where its client runs.
func upRemote(l *lab.Lab, cfg lab.Config, o Options) error {
	set := engine.NewSet(l.Name, "", cfg.Owner.String())
	set.JoinSwarm = o.JoinSwarm
	used := map[string]string{}
	for _, h := range cfg.Topology.Hosts {
		if u, ok := o.Engines[h.Name]; ok && len(h.Endpoints) > 0 {
			used[h.Name] = u
		}
	}
	if err := set.UseEngines(context.Background(), used, o.TLS); err != nil {
		return err
	}
	l.Runtime = newRuntime(l, set, lab.Sight{Local: false, Own: false})
	self := fmt.Sprintf("/proc/%d/ns/net", os.Getpid())
	for i, spec := range cfg.Topology.Hosts {
		h := lab.Host{Name: spec.Name, Index: i + 1, NS: self}
		if e := set.Engine(spec.Name); e != nil {
			h.NS, h.Addr = "", e.Addr
		}
		l.Hosts = append(l.Hosts, h)
	}
	b := &Build{Build: l.NewBuild(), Remote: true, set: set, exe: cfg.Exe, single: lab.IsSingleHost(cfg.Mode)}
	eps, err := cfg.Mode.(Mode).BuildDocker(b)
	if err != nil {
		return fmt.Errorf("build mode %s on the engines: %w", l.Mode, err)
	}
	l.Endpoints = eps
	return nil
}

// Down removes the lab's engines while their namespaces still exist (they
// stop their containers and unmount what they mounted), then the emulated
// hosts.
func (Driver) Down(name string) error {
	return errors.Join(engine.Remove(name), netns.Driver{}.Down(name))
}

// Labs finds the labs that have engines, by the owner recorded with them:
// also those whose namespaces are gone (a run killed while it tore down)
// and those on an existing engine, which have none.
func (Driver) Labs() ([]lab.Info, error) {
	names, err := engine.Labs()
	if err != nil {
		return nil, err
	}
	var out []lab.Info
	for _, name := range names {
		if lab.ValidName(name) != nil {
			continue
		}
		info := lab.Info{Name: name, Mode: "?", OwnerText: engine.Owner(name)}
		info.Owner, _ = owner.Parse(info.OwnerText) // unreadable: nobody's, never gone
		out = append(out, info)
	}
	return out, nil
}
