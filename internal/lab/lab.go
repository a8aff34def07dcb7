// Package lab builds and removes cnperf's emulated clusters with the netns
// driver. A lab is a set of emulated hosts, each a named network namespace
// (cnperf-<lab>-<host>) with one NIC, eth0, on an underlay switch: a Linux
// bridge in the lab's own namespace (cnperf-<lab>-net), the "physical
// network". A Mode then adds what containers run on. Nothing is created in
// the root namespace, every link carries the alias cnperf:<lab>, and a lab is
// found again from the namespace names alone, so no state file is needed and
// deleting is idempotent.
package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/lab/container"
	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/lab/netbuild"
	"github.com/cnperf/cnperf/internal/lab/netnsutil"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Prefix starts the name of every namespace cnperf creates.
const Prefix = "cnperf-"

// switchHost names the lab's underlay namespace.
const switchHost = "net"

// OVSRunRoot holds the files of the ovs mode's daemons, per lab and host.
const OVSRunRoot = "/run/cnperf/ovs"

// OVSRunDir is a lab's directory under OVSRunRoot.
func OVSRunDir(lab string) string { return filepath.Join(OVSRunRoot, lab) }

// Underlay is the lab's "physical" subnet. Every lab is sealed in its own
// namespaces, so all labs share one address plan without conflict.
const Underlay = "198.18.0.0/24"

// UnderlayIP is the address of the host with the given index (1-based).
func UnderlayIP(index int) net.IP { return net.IPv4(198, 18, 0, byte(index)).To4() }

// UnderlayMTU is the MTU of the emulated hosts' NICs.
const UnderlayMTU = 1500

// DockerEndpointOf describes a sandbox for an Endpoint.
func DockerEndpointOf(sb dockerbuild.Sandbox, net *dockerbuild.NetworkInfo) *DockerEndpoint {
	return &DockerEndpoint{DockerHost: sb.Engine.DockerHost(), Version: sb.Engine.Version, API: sb.Engine.API,
		Sandbox: sb.ID, SandboxPID: sb.PID, Image: sb.Image, CgroupParent: sb.Engine.CgroupParent, Network: net}
}

// The lab's record types, under the names modes use.
type (
	Host           = record.Host
	Endpoint       = record.Endpoint
	RouterInfo     = record.RouterInfo
	DockerEndpoint = record.DockerEndpoint
	Port           = record.Port
)

// Mode adds a network setup to a lab whose hosts are up. Every device it
// creates must live in the lab's namespaces (or in namespaces named
// ContainerNS), so that Down removes it.
type Mode interface {
	Name() string
	Summary() string
	// Build sets up the servers (every host but the first, which is the
	// client outside the cluster) to serve on port and returns one Endpoint
	// per server, in order.
	Build(l *Lab, servers []Host, port int) ([]Endpoint, error)
}

// DockerMode is a mode that can also be built on real Docker Engines (the
// docker driver): each host runs its own dockerd, and the mode makes
// Docker's own networks and containers instead of devices by hand.
type DockerMode interface {
	BuildDocker(l *Lab, servers []Host, port int) ([]Endpoint, error)
}

// Drivers build labs: by hand in namespaces, or on Docker Engines.
const (
	DriverNetns  = "netns"
	DriverDocker = "docker"
)

// Lab is a lab being built or up: its record (what run.json stores) and
// the handle modes build with.
type Lab struct {
	record.Lab

	engines *engine.Set
	exe     string
	logs    string
	procs   map[string]*container.Process // processes the mode started
	// fixedOff are devices ("ns/dev") whose offloads the mode needs off.
	fixedOff map[string]bool
	// mark is what every namespace of the lab carries: name, mode, owner.
	mark Mark
}

// KeepOffloadsOff tells the offloads condition to leave dev in ns off:
// the mode needs it so (Open vSwitch's netdev datapath).
func (l *Lab) KeepOffloadsOff(ns, dev string) {
	if l.fixedOff == nil {
		l.fixedOff = map[string]bool{}
	}
	l.fixedOff[ns+"/"+dev] = true
}

// Config says what to build.
type Config struct {
	Name  string
	Mode  Mode
	Hosts []string // first: the client; the rest: servers
	Port  int      // the endpoints' port, published over TCP
	// Publish adds ports (e.g. UDP, or other workloads' servers) that modes
	// with NAT publish besides Port.
	Publish []Port
	// Peers builds a container on every host, the first included: the
	// client is then a container too (container to container traffic, as
	// iperf between two containers), not a machine outside the cluster.
	Peers bool
	// Driver is DriverNetns (the default) or DriverDocker; Exe is the
	// binary the docker driver's workload image holds.
	Driver string
	Exe    string
	// Logs is where processes a mode starts (overlay routers) log; none
	// when empty.
	Logs string
	// Conditions change what the lab's hosts may use (CPUs, bandwidth,
	// offloads, TCP buffers); the netns driver applies them after the mode.
	Conditions conditions.Set
	// Owner is the process the lab belongs to: `cnperf clean` removes the
	// lab once it has exited. owner.None (lab up) is nobody's: the lab stays
	// until removed by name or by `clean --all`.
	Owner owner.ID
	// DockerHost, with the docker driver, runs the lab on an existing engine
	// (e.g. unix:///var/run/docker.sock) instead of one per emulated host:
	// the hosts are all this machine, and only single-host modes apply.
	DockerHost string
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]{0,39}$`)
var hostRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,9}$`)

// ValidName checks a lab name: lower-case letters, digits and '_' (no '-',
// which separates the lab from the host in namespace names).
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("lab name %q: use 1-40 of a-z, 0-9 and _, starting with a letter or digit", name)
	}
	return nil
}

// NS returns the namespace name of a host of a lab.
func NS(lab, host string) string { return Prefix + lab + "-" + host }

// ContainerNS returns the namespace name of the container on a host.
func ContainerNS(lab, host string) string { return NS(lab, host) + "-c" }

// PublishPorts returns the ports to publish, for netbuild.Publish.
func (l *Lab) PublishPorts() []netbuild.Port {
	var ps []netbuild.Port
	for _, p := range l.Publish {
		ps = append(ps, netbuild.Port{Number: p.Number, Protocol: p.Protocol})
	}
	return ps
}

// Builder returns the building blocks bound to this lab.
func (l *Lab) Builder() netbuild.B { return netbuild.B{Lab: l.Name} }

// StartProcess starts a process the mode needs for the lab's lifetime (an
// overlay router) in ns as a container with its own cgroup, so its CPU and
// memory are accounted; Down ends it with the lab's namespaces. Args are
// cnperf's arguments: the lab's binary runs them.
func (l *Lab) StartProcess(name, ns string, cpus []int, args []string) error {
	if l.exe == "" {
		return fmt.Errorf("lab %s: no cnperf binary to start %s with", l.Name, name)
	}
	return l.StartCommand(name, ns, cpus, append([]string{l.exe}, args...), nil)
}

// StartCommand is StartProcess for another program (argv[0]), with env
// added to its environment: Open vSwitch's daemons.
func (l *Lab) StartCommand(name, ns string, cpus []int, argv, env []string) error {
	out := io.Discard
	if l.logs != "" {
		f, err := os.Create(filepath.Join(l.logs, l.Name+"-"+name+".log"))
		if err != nil {
			return err
		}
		defer f.Close() // the child holds its own descriptor
		out = f
	}
	p, err := container.Start(container.Spec{Lab: l.Name, Name: name, NetNS: ns, Container: true, Daemon: true, CPUs: cpus,
		Args: argv, Env: env, Stdout: out, Stderr: out})
	if err != nil {
		return err
	}
	if l.procs == nil {
		l.procs = map[string]*container.Process{}
	}
	l.procs[name] = p
	return nil
}

// Processes returns the processes the mode started, by name.
func (l *Lab) Processes() map[string]*container.Process { return l.procs }

// Check reports a process of the mode's that has died.
func (l *Lab) Check() error {
	for name, p := range l.procs {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s exited (%v); see logs/%s-%s.log", name, err, l.Name, name)
		}
	}
	return nil
}

// DockerPorts returns the ports to publish, for dockerbuild.Attach.
func (l *Lab) DockerPorts() []dockerbuild.Port {
	var ps []dockerbuild.Port
	for _, p := range l.Publish {
		ps = append(ps, dockerbuild.Port{Number: p.Number, Protocol: p.Protocol})
	}
	return ps
}

// ErrSingleEngine is what a mode that spans hosts says on an existing
// engine, which is one host.
var ErrSingleEngine = errors.New("needs emulated hosts, a dockerd each; on an existing engine (--docker-host) only bare, host and bridge run")

// StartEngines starts the servers' engines with the workload image and
// returns the building blocks and the image. A mode that spans hosts says
// so (spansHosts), and is refused on an existing engine.
func (l *Lab) StartEngines(servers []Host, spansHosts bool) (dockerbuild.B, string, error) {
	if l.Local && spansHosts {
		return dockerbuild.B{}, "", ErrSingleEngine
	}
	b := l.DockerBuilder()
	image, err := b.Start(EngineHosts(servers))
	return b, image, err
}

// DockerBuilder returns the docker driver's building blocks bound to this
// lab's engines.
func (l *Lab) DockerBuilder() dockerbuild.B {
	return dockerbuild.B{Set: l.engines, Exe: l.exe, CPUs: l.HostCPUs()}
}

// Engines returns the lab's Docker Engines (nil on the netns driver).
func (l *Lab) Engines() *engine.Set { return l.engines }

// EngineHosts returns hosts as the engines take them.
func EngineHosts(hosts []Host) []engine.Host {
	var out []engine.Host
	for _, h := range hosts {
		out = append(out, engine.Host{Name: h.Name, NS: h.NS, Addr: h.Addr})
	}
	return out
}

// Endpoint returns the endpoint on the named host.
func (l *Lab) Endpoint(host string) (Endpoint, error) {
	for _, e := range l.Endpoints {
		if e.Host == host {
			return e, nil
		}
	}
	return Endpoint{}, fmt.Errorf("lab %s has no endpoint on host %q", l.Name, host)
}

// Host returns the named host.
func (l *Lab) Host(name string) (Host, error) {
	for _, h := range l.Hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return Host{}, fmt.Errorf("lab %s has no host %q", l.Name, name)
}

// Up builds a lab. On any error it removes what it built.
func Up(cfg Config) (l *Lab, err error) {
	if err := ValidName(cfg.Name); err != nil {
		return nil, err
	}
	if cfg.Mode == nil {
		return nil, errors.New("lab: no mode given")
	}
	switch cfg.Driver {
	case "", DriverNetns:
		cfg.Driver = DriverNetns
	case DriverDocker:
		// An existing engine's host is the user's machine: cnperf shapes
		// and tunes only what it built.
		if cfg.DockerHost != "" && !cfg.Conditions.Empty() {
			return nil, errors.New("lab: conditions (cores, bandwidth, ...) change the hosts, which on an existing engine is the user's machine: use emulated hosts")
		}
		if _, ok := cfg.Mode.(DockerMode); !ok {
			return nil, fmt.Errorf("lab: mode %s cannot be built on the docker driver", cfg.Mode.Name())
		}
		if cfg.Exe == "" {
			return nil, errors.New("lab: the docker driver needs the cnperf binary for its image")
		}
		if err := engine.Usable(cfg.Exe); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("lab: unknown driver %q (known: netns, docker)", cfg.Driver)
	}
	if len(cfg.Hosts) < 2 {
		return nil, errors.New("lab: need a client host and at least one server host")
	}
	seen := map[string]bool{switchHost: true}
	for _, h := range cfg.Hosts {
		if !hostRE.MatchString(h) || seen[h] {
			return nil, fmt.Errorf("lab: bad or repeated host name %q", h)
		}
		seen[h] = true
	}
	if cfg.DockerHost != "" {
		if cfg.Driver != DriverDocker {
			return nil, errors.New("lab: a docker host needs the docker driver")
		}
		return upLocal(cfg)
	}
	existing, err := namespaces(cfg.Name)
	if err != nil {
		return nil, err
	}
	if len(existing) > 0 {
		return nil, fmt.Errorf("lab %s already exists (%s); remove it with `cnperf lab down %s`", cfg.Name, existing[0], cfg.Name)
	}
	l = &Lab{Lab: record.Lab{Name: cfg.Name, Mode: cfg.Mode.Name(), Switch: NS(cfg.Name, switchHost),
		Publish: append([]Port{{Number: cfg.Port, Protocol: "tcp"}}, cfg.Publish...), Driver: cfg.Driver, Conditions: cfg.Conditions},
		exe: cfg.Exe, logs: cfg.Logs, mark: Mark{Lab: cfg.Name, Mode: cfg.Mode.Name(), Owner: cfg.Owner}}
	for _, p := range l.Publish {
		if p.Number < 1 || p.Number > 65535 || (p.Protocol != "tcp" && p.Protocol != "udp") {
			return nil, fmt.Errorf("lab: bad port %d/%s", p.Number, p.Protocol)
		}
	}
	defer func() {
		if err != nil {
			if derr := Down(cfg.Name); derr != nil {
				err = fmt.Errorf("%w (and removing the half-built lab failed: %v)", err, derr)
			}
			l = nil
		}
	}()
	b := l.Builder()
	if err := l.CreateNS(l.Switch); err != nil {
		return nil, err
	}
	if err := b.Bridge(l.Switch, "br0", l.MTU()); err != nil {
		return nil, err
	}
	// A physical switch runs no netfilter; with br_netfilter built in, a
	// Linux bridge would pass every frame through iptables' hooks. The
	// hosts keep the kernel's default (on), as Docker sets it.
	if err := b.SysctlIfPresent(l.Switch, "net.bridge.bridge-nf-call-iptables", "0"); err != nil {
		return nil, err
	}
	if err := b.SysctlIfPresent(l.Switch, "net.bridge.bridge-nf-call-arptables", "0"); err != nil {
		return nil, err
	}
	for i, name := range cfg.Hosts {
		h := Host{Name: name, Index: i + 1, NS: NS(cfg.Name, name), Addr: UnderlayIP(i + 1).String()}
		if err := l.CreateNS(h.NS); err != nil {
			return nil, err
		}
		if err := b.Veth(l.Switch, name, "br0", h.NS, "eth0", l.MTU()); err != nil {
			return nil, err
		}
		if err := b.Addr(h.NS, "eth0", h.Addr+"/24"); err != nil {
			return nil, err
		}
		l.Hosts = append(l.Hosts, h)
	}
	servers := l.Hosts[1:]
	if cfg.Peers {
		servers = l.Hosts
	}
	var eps []Endpoint
	if cfg.Driver == DriverDocker {
		l.engines = engine.NewSet(l.Name, l.Switch, cfg.Owner.String())
		eps, err = cfg.Mode.(DockerMode).BuildDocker(l, servers, cfg.Port)
	} else {
		eps, err = cfg.Mode.Build(l, servers, cfg.Port)
	}
	if err != nil {
		return nil, fmt.Errorf("build mode %s: %w", l.Mode, err)
	}
	l.Endpoints = eps
	if err := l.setCongestion(); err != nil {
		return nil, fmt.Errorf("tcp_congestion %s: %w", l.Conditions.Congestion(), err)
	}
	if err := l.applyConditions(servers); err != nil {
		return nil, fmt.Errorf("conditions %s: %w", l.Conditions.Label(), err)
	}
	return l, nil
}

// applyConditions shapes the underlay, sets offloads and TCP buffers in
// every namespace of the lab, and starts the CPU stress on each server
// host. CPUs are pinned where processes start (HostCPUs, StartProcess).
func (l *Lab) applyConditions(servers []Host) error {
	c := l.Conditions
	if c.Empty() {
		return nil
	}
	b := l.Builder()
	if c.Bandwidth != "" {
		for _, h := range l.Hosts {
			if err := b.Shape(h.NS, "eth0", c.Bandwidth); err != nil {
				return err
			}
		}
	}
	nss, err := namespaces(l.Name)
	if err != nil {
		return err
	}
	for _, ep := range l.Endpoints {
		if ep.Docker != nil && !slices.Contains(nss, ep.NS) {
			nss = append(nss, ep.NS) // a Docker sandbox's namespace
		}
	}
	for _, ns := range nss {
		if ns == l.Switch {
			continue // the switch's ports stay as a switch's are
		}
		if c.TCPRmem != "" {
			if err := b.Sysctl(ns, "net.ipv4.tcp_rmem", c.TCPRmem); err != nil {
				return err
			}
		}
		if c.TCPWmem != "" {
			if err := b.Sysctl(ns, "net.ipv4.tcp_wmem", c.TCPWmem); err != nil {
				return err
			}
		}
		if c.Offloads != "" {
			h, err := netnsutil.Handle(ns)
			if err != nil {
				return err
			}
			links, err := h.LinkList()
			h.Close()
			if err != nil {
				return err
			}
			for _, link := range links {
				if link.Attrs().Name == "lo" || (c.Offloads == "on" && l.fixedOff[ns+"/"+link.Attrs().Name]) {
					continue
				}
				if err := b.Offloads(ns, link.Attrs().Name, c.Offloads == "on"); err != nil {
					return err
				}
			}
		}
	}
	if c.CPUStress > 0 {
		threads := max(len(c.HostCPUs()), 1)
		if c.Cores == 0 {
			threads = runtime.NumCPU()
		}
		for _, h := range servers {
			args := []string{"stress", "--share", strconv.FormatFloat(c.CPUStress, 'g', -1, 64), "--threads", strconv.Itoa(threads)}
			if c.CPUStressOn > 0 {
				args = append(args, "--on", c.CPUStressOn.String(), "--off", c.CPUStressOff.String())
			}
			if err := l.StartProcess("stress-"+h.Name, h.NS, c.HostCPUs(), args); err != nil {
				return err
			}
		}
	}
	return nil
}

// HostCPUs are the CPUs a server host's processes may use (nil: any).
func (l *Lab) HostCPUs() []int { return l.Conditions.HostCPUs() }

// MTU is the underlay's MTU: UnderlayMTU unless a condition sets it.
func (l *Lab) MTU() int {
	if l.Conditions.MTU > 0 {
		return l.Conditions.MTU
	}
	return UnderlayMTU
}

// OverlayMTU is an overlay device's MTU: the underlay's less the overlay's
// header (overhead bytes), unless a condition sets it.
func (l *Lab) OverlayMTU(overhead int) int {
	if l.Conditions.OverlayMTU > 0 {
		return l.Conditions.OverlayMTU
	}
	return l.MTU() - overhead
}

// namespaces lists the namespaces of one lab: those named for it that
// carry its mark. A namespace that only looks like the lab's by name (a
// user's cnperf-dev-1) is not cnperf's and is left alone. The '-' after the
// lab name keeps lab "a" from matching lab "a_b".
func namespaces(lab string) ([]string, error) {
	nss, err := netnsutil.List(Prefix + lab + "-")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range nss {
		if m, ok := readMark(ns); ok && m.Lab == lab {
			out = append(out, ns)
		}
	}
	return out, nil
}

// Down removes a lab: it kills the processes inside its namespaces (only
// cnperf and the people using its labs start any there), then deletes the
// namespaces, which removes every device and firewall rule with them (a veth
// goes when either end's namespace goes, so the order does not matter), and
// its cgroups and the modes' files. Removing a lab that does not exist, or
// whose namespaces vanish meanwhile, is not an error.
func Down(name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	// Docker Engines first, while their namespaces still exist: they stop
	// their containers and unmount what they mounted.
	var errs []error
	if err := engine.Remove(name); err != nil {
		errs = append(errs, err)
	}
	nss, err := namespaces(name)
	if err != nil {
		return err
	}
	for _, ns := range nss {
		if err := killIn(ns); err != nil && netnsutil.Exists(ns) {
			errs = append(errs, err)
		}
	}
	for _, ns := range nss {
		if err := netnsutil.Delete(ns); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := container.CleanCgroups(name); err != nil {
		errs = append(errs, err)
	}
	// Open vSwitch's databases, sockets and logs (its daemons died with the
	// namespaces' processes), and the roots once empty.
	if err := removeOVSDir(name); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func removeOVSDir(lab string) error {
	err := os.RemoveAll(OVSRunDir(lab))
	_ = os.Remove(OVSRunRoot)
	_ = os.Remove(filepath.Dir(OVSRunRoot))
	return err
}

// killIn ends the processes inside a namespace, by PID: SIGTERM, then
// SIGKILL for those still there after a grace period.
func killIn(ns string) error {
	pids, err := netnsutil.Pids(ns)
	if err != nil || len(pids) == 0 {
		return err
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	gone := func() (bool, error) { left, _ := netnsutil.Pids(ns); return len(left) == 0, nil }
	if poll.Until(context.Background(), 2*time.Second, 20*time.Millisecond, gone) == nil {
		return nil
	}
	left, _ := netnsutil.Pids(ns)
	for _, p := range left {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return nil
}

// Info is what `cnperf lab ls` shows of a lab found on the machine.
type Info struct {
	Name       string   `json:"name"`
	Mode       string   `json:"mode"`
	Owner      owner.ID `json:"-"`
	OwnerText  string   `json:"owner"` // PID.START, or none (lab up)
	Namespaces []string `json:"namespaces"`
}

// List finds every cnperf lab on the machine by the marks of its
// namespaces; namespaces without cnperf's mark are not listed.
func List() ([]Info, error) {
	nss, err := netnsutil.List(Prefix)
	if err != nil {
		return nil, err
	}
	byLab := map[string]*Info{}
	var order []string
	for _, ns := range nss {
		m, ok := readMark(ns)
		if !ok || !strings.HasPrefix(ns, Prefix+m.Lab+"-") {
			continue
		}
		if byLab[m.Lab] == nil {
			byLab[m.Lab] = &Info{Name: m.Lab, Mode: m.Mode, Owner: m.Owner, OwnerText: m.Owner.String()}
			order = append(order, m.Lab)
		}
		byLab[m.Lab].Namespaces = append(byLab[m.Lab].Namespaces, ns)
	}
	var out []Info
	for _, name := range order {
		out = append(out, *byLab[name])
	}
	return out, nil
}

// Cleaned says what Clean removed and what it left to a live owner.
type Cleaned struct {
	Removed []Info // labs (and engines or cgroups of labs) removed
	Spared  []Info // labs whose owner still runs, or nobody's without all
}

// Clean removes what dead cnperf processes left: every lab whose owner has
// exited, engines whose recorded owner has exited, and cgroups and mode
// files of labs that have neither namespaces nor engines left. With all, it
// removes every lab, nobody's (lab up) and live owners' too. What is not
// marked as cnperf's is never touched.
func Clean(all bool) (Cleaned, error) {
	var res Cleaned
	labs, err := List()
	if err != nil {
		return res, err
	}
	var errs []error
	keep := map[string]bool{} // labs left to a live owner
	done := map[string]bool{}
	for _, l := range labs {
		if !all && !l.Owner.Gone() {
			keep[l.Name] = true
			res.Spared = append(res.Spared, l)
			continue
		}
		if err := Down(l.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		done[l.Name] = true
		res.Removed = append(res.Removed, l)
	}
	// Engines whose lab's namespaces are already gone (a run killed while
	// it tore down), by the owner recorded with them.
	engLabs, err := engine.Labs()
	if err != nil {
		errs = append(errs, err)
	}
	for _, name := range engLabs {
		if keep[name] || done[name] {
			continue
		}
		info := Info{Name: name, Mode: "?", OwnerText: engine.Owner(name)}
		id, perr := owner.Parse(info.OwnerText)
		info.Owner = id
		if !all && (perr != nil || !id.Gone()) {
			keep[name] = true
			res.Spared = append(res.Spared, info)
			continue
		}
		if err := engine.Remove(name); err != nil {
			errs = append(errs, err)
			continue
		}
		done[name] = true
		res.Removed = append(res.Removed, info)
	}
	// Cgroups and Open vSwitch files of labs with nothing else left: their
	// owner died between removing the namespaces and these.
	orphans := map[string]bool{}
	for _, name := range container.CgroupLabs() {
		orphans[name] = true
	}
	if entries, err := os.ReadDir(OVSRunRoot); err == nil {
		for _, e := range entries {
			orphans[e.Name()] = true
		}
	}
	for name := range orphans {
		if keep[name] || ValidName(name) != nil {
			continue
		}
		_, cerr := container.CleanCgroups(name)
		oerr := removeOVSDir(name)
		if cerr != nil || oerr != nil {
			errs = append(errs, cerr, oerr)
			continue
		}
		if !done[name] {
			done[name] = true
			res.Removed = append(res.Removed, Info{Name: name, Mode: "?", OwnerText: "?"})
		}
	}
	return res, errors.Join(errs...)
}

// upLocal builds a lab on an existing engine: no namespaces, every host is
// this machine (its own network namespace, loopback), and the mode makes
// only labelled containers and networks on the engine.
func upLocal(cfg Config) (l *Lab, err error) {
	if _, err := os.Stat(engine.RunDir(cfg.Name)); err == nil {
		return nil, fmt.Errorf("lab %s already exists; remove it with `cnperf lab down %s`", cfg.Name, cfg.Name)
	}
	l = &Lab{Lab: record.Lab{Name: cfg.Name, Mode: cfg.Mode.Name(), Driver: cfg.Driver, Local: true, DockerHost: cfg.DockerHost,
		Publish: append([]Port{{Number: cfg.Port, Protocol: "tcp"}}, cfg.Publish...)}, exe: cfg.Exe}
	defer func() {
		if err != nil {
			if derr := Down(cfg.Name); derr != nil {
				err = fmt.Errorf("%w (and removing the half-built lab failed: %v)", err, derr)
			}
			l = nil
		}
	}()
	self := fmt.Sprintf("/proc/%d/ns/net", os.Getpid())
	for i, name := range cfg.Hosts {
		l.Hosts = append(l.Hosts, Host{Name: name, Index: i + 1, NS: self, Addr: "127.0.0.1"})
	}
	l.engines = engine.NewSet(l.Name, "", cfg.Owner.String())
	if err := l.engines.UseExisting(context.Background(), cfg.DockerHost, cfg.Hosts); err != nil {
		return nil, err
	}
	servers := l.Hosts[1:]
	if cfg.Peers {
		servers = l.Hosts
	}
	eps, err := cfg.Mode.(DockerMode).BuildDocker(l, servers, cfg.Port)
	if err != nil {
		return nil, fmt.Errorf("build mode %s on %s: %w", l.Mode, cfg.DockerHost, err)
	}
	l.Endpoints = eps
	return l, nil
}

// LocalEndpoints returns, for a lab on an existing engine, endpoints in
// this machine's own network namespace: listening on loopback only (the
// machine's real network sees nothing) and on a port of their own each,
// as they share one stack.
func LocalEndpoints(servers []Host, port int, container bool, docker []*DockerEndpoint, path string) []Endpoint {
	var eps []Endpoint
	for i, h := range servers {
		addr := HostPort("127.0.0.1", port+i)
		ep := Endpoint{Host: h.Name, NS: h.NS, Container: container, Listen: addr, External: addr, Internal: addr,
			Path: []string{"lo (" + path + ")"}}
		if docker != nil {
			// The engine's own namespace: the machine's, for a user's engine.
			ep.Docker, ep.NS = docker[i], fmt.Sprintf("/proc/%d/ns/net", docker[i].SandboxPID)
		}
		eps = append(eps, ep)
	}
	return eps
}
