// Package netns is the driver that emulates hosts: each host is a named
// network namespace (cnperf-<lab>-<host>) with one NIC, eth0, on an
// underlay switch, a Linux bridge in the lab's own namespace
// (cnperf-<lab>-net), the "physical network"; a Mode then builds by hand
// what containers run on. Nothing is created in the root namespace, every
// link carries the alias cnperf:<lab>, every namespace the lab's mark, and a
// lab is found again from its marks alone, so no state file is needed and
// deleting is idempotent. The docker driver runs its engines on these hosts.
package netns

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Name is the driver's name.
const Name = "netns"

// Mode is a mode the netns driver can build: by hand, in the lab's
// namespaces. Every device it creates must live in the lab's namespaces (or
// in namespaces made with Build.CreateNS), so that Down removes it.
type Mode interface {
	lab.Mode
	// Build sets up an endpoint on each of b.Hosts to serve on b.Port and
	// returns them, in order.
	Build(b *Build) ([]lab.Endpoint, error)
}

// Build is the handle a mode builds with on emulated hosts: the lab's Build
// plus the blocks for devices by hand.
type Build struct {
	*lab.Build
	mark Mark
	// fixedOff are devices ("ns/dev") whose offloads the mode needs off.
	fixedOff map[string]bool
	chain    bool // the hosts are in a line (chain.go)
}

// Net returns the building blocks (bridges, veths, addresses, rules) bound
// to this lab.
func (b *Build) Net() netdev.B { return netdev.B{Lab: b.Lab} }

// CreateNS creates a namespace of the lab (a container's), marked as the
// lab's; Down removes it with the rest.
func (b *Build) CreateNS(ns string) error { return createNS(b.mark, ns, b.Conditions.HasIPv6()) }

// ContainerNS names the container namespace on a host of this lab.
func (b *Build) ContainerNS(host string) string { return lab.ContainerNS(b.Lab, host) }

// MTU is the underlay's MTU: lab.UnderlayMTU unless a condition sets it.
func (b *Build) MTU() int { return mtu(b.Conditions.MTU) }

// OverlayMTU is an overlay device's MTU: the underlay's less the overlay's
// header (overhead bytes), unless a condition sets it.
func (b *Build) OverlayMTU(overhead int) int {
	if b.Conditions.OverlayMTU > 0 {
		return b.Conditions.OverlayMTU
	}
	return b.MTU() - overhead
}

// KeepOffloadsOff tells the offloads condition to leave dev in ns off:
// the mode needs it so (Open vSwitch's netdev datapath).
func (b *Build) KeepOffloadsOff(ns, dev string) { b.fixedOff[ns+"/"+dev] = true }

func mtu(condition int) int {
	if condition > 0 {
		return condition
	}
	return lab.UnderlayMTU
}

// Driver is the netns driver.
type Driver struct{ lab.BaseDriver }

func (Driver) Name() string { return Name }

// Builds reports whether the mode can be built in namespaces by hand.
func (Driver) Builds(m lab.Mode) bool { _, ok := m.(Mode); return ok }

// CheckFamily refuses an ip_family the mode does not carry (lab.Families)
// and an IPv6 the kernel lacks.
func (Driver) CheckFamily(m lab.Mode, c conditions.Set) error {
	if err := lab.CheckFamily(m, c); err != nil {
		return err
	}
	return lab.KernelIPv6("/proc/sys", c)
}

// Validate refuses a mode the driver cannot build and a lab that exists.
func (d Driver) Validate(cfg lab.Config) error {
	if !d.Builds(cfg.Mode) {
		return fmt.Errorf("lab: mode %s cannot be built on the %s driver", cfg.Mode.Name(), Name)
	}
	if _, err := remoteHosts(cfg); err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	if err := lab.CheckFamily(cfg.Mode, cfg.Conditions); err != nil {
		return err
	}
	if n := cfg.Conditions.ConntrackMax; n > 0 {
		if err := lab.CheckConntrackMax(cfg.Name, n); err != nil {
			return err
		}
	}
	if cfg.Topology.Chain {
		if _, err := chainRouting(cfg.Mode); err != nil {
			return fmt.Errorf("lab: %w", err)
		}
		if cfg.Conditions.Zoned() {
			return errors.New("lab: zone conditions split a switch, and a chain of hosts has none")
		}
	}
	return CheckFree(cfg.Name)
}

// CheckFree refuses a lab whose namespaces exist.
func CheckFree(name string) error {
	existing, err := namespaces(name)
	if err != nil {
		return err
	}
	if len(existing) > 0 {
		return fmt.Errorf("lab %s already exists (%s); remove it with `cnperf lab down %s`", name, existing[0], name)
	}
	return nil
}

// Up builds the hosts, has the mode build on them, and applies the lab's
// TCP congestion control and conditions.
func (Driver) Up(l *lab.Lab, cfg lab.Config) error {
	if err := UpHosts(l, cfg); err != nil {
		return err
	}
	b := NewBuild(l, cfg)
	eps, err := cfg.Mode.(Mode).Build(b)
	if err != nil {
		return fmt.Errorf("build mode %s: %w", l.Mode, err)
	}
	l.Endpoints = eps
	rt := NewRuntime(l)
	rt.PlanFlaps(l, cfg.Links)
	l.Runtime = rt
	return Finish(l, b.Hosts, b.fixedOff)
}

// NewBuild returns the mode's handle for a lab whose hosts are up.
func NewBuild(l *lab.Lab, cfg lab.Config) *Build {
	return &Build{Build: l.NewBuild(), mark: markOf(cfg), fixedOff: map[string]bool{}, chain: cfg.Topology.Chain}
}

func markOf(cfg lab.Config) Mark {
	return Mark{Lab: cfg.Name, Mode: cfg.Mode.Name(), Owner: cfg.Owner}
}

// UpHosts builds the lab's switch and its hosts, in the topology's order:
// host i is 198.18.0.i on the switch. With zones, the second zone's hosts
// are on a switch of their own, joined to the first's through a delay
// (zones.go). A chain's hosts are in a line instead, with no switch
// (chain.go).
func UpHosts(l *lab.Lab, cfg lab.Config) error {
	mark := markOf(cfg)
	cfg.Links = conditions.WithDelay(cfg.Links, linkNames(cfg.Topology), cfg.Conditions.LinkDelay())
	l.Spawner = Spawner{}
	if cfg.Topology.Chain {
		routing, err := chainRouting(cfg.Mode)
		if err != nil {
			return err
		}
		return upChain(l, cfg, mark, routing)
	}
	l.Switch = lab.NS(cfg.Name, lab.SwitchHost)
	b := netdev.B{Lab: cfg.Name}
	mtu := mtu(cfg.Conditions.MTU)
	// The switch only bridges: IPv6 stays off there whatever the family.
	if err := createNS(mark, l.Switch, false); err != nil {
		return err
	}
	if err := b.Bridge(l.Switch, "br0", mtu); err != nil {
		return err
	}
	// A physical switch runs no netfilter; with br_netfilter built in, a
	// Linux bridge would pass every frame through iptables' hooks. The
	// hosts keep the kernel's default (on), as Docker sets it.
	if err := b.SysctlIfPresent(l.Switch, "net.bridge.bridge-nf-call-iptables", "0"); err != nil {
		return err
	}
	if err := b.SysctlIfPresent(l.Switch, "net.bridge.bridge-nf-call-arptables", "0"); err != nil {
		return err
	}
	remote, err := remoteHosts(cfg)
	if err != nil {
		return err
	}
	if len(remote) > 0 {
		if err := b.Bridge(l.Switch, zoneBridge, mtu); err != nil {
			return err
		}
	}
	c := cfg.Conditions
	for i, spec := range cfg.Topology.Hosts {
		h := lab.Host{Name: spec.Name, Index: i + 1, NS: lab.NS(cfg.Name, spec.Name)}
		if c.HasIPv4() {
			h.Addr = lab.UnderlayIP(i + 1).String()
		}
		if c.HasIPv6() {
			h.Addr6 = lab.UnderlayIP6(i + 1).String()
		}
		if err := createNS(mark, h.NS, c.HasIPv6()); err != nil {
			return err
		}
		if err := hostUplink(b, l, h, zoneOf(remote, h.Name), linkOf(cfg.Links, h.Name), mtu); err != nil {
			return err
		}
		if err := hostAddrs(b, h); err != nil {
			return err
		}
		l.Hosts = append(l.Hosts, h)
	}
	if len(remote) > 0 {
		if err := joinZones(l, cfg.Conditions, remote); err != nil {
			return err
		}
	}
	return impairLinks(l, cfg)
}

// hostAddrs gives host h's eth0 its underlay addresses: 198.18.0.i/24
// unless the lab is IPv6-only (then no IPv4 address at all, so nothing can
// use IPv4 unnoticed), and on a lab with IPv6 2001:2::i/64 and the
// link-local address a host that forwards (routed modes) solicits with.
func hostAddrs(b netdev.B, h lab.Host) error {
	var cidrs []string
	if h.Addr != "" {
		cidrs = append(cidrs, h.Addr+"/24")
	}
	if h.Addr6 != "" {
		cidrs = append(cidrs, h.Addr6+"/64", lab.LinkLocal6(h.Index))
	}
	for _, a := range cidrs {
		if err := b.Addr(h.NS, "eth0", a); err != nil {
			return err
		}
	}
	return nil
}

// createNS creates a namespace of the lab, marked as the lab's, with IPv6
// on (quietly) when ipv6 is set.
func createNS(m Mark, ns string, ipv6 bool) error {
	if !strings.HasPrefix(ns, lab.Prefix+m.Lab+"-") {
		return fmt.Errorf("lab %s: namespace %s is not named for the lab", m.Lab, ns)
	}
	if err := namespace.Create(ns, m.String()); err != nil {
		return err
	}
	if ipv6 {
		return namespace.EnableIPv6(ns)
	}
	return nil
}

// Down removes a lab's namespaces: it kills the processes inside them (only
// cnperf and the people using its labs start any there), then deletes the
// namespaces, which removes every device and firewall rule with them (a
// veth goes when either end's namespace goes, so the order does not
// matter). Namespaces that vanish meanwhile are not an error.
func (Driver) Down(name string) error {
	nss, err := namespaces(name)
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range nss {
		if err := killIn(ns); err != nil && namespace.Exists(ns) {
			errs = append(errs, err)
		}
	}
	for _, ns := range nss {
		if err := namespace.Delete(ns); err != nil {
			errs = append(errs, err)
		}
	}
	// The cgroups of the lab's processes (servers, clients, routers, the
	// docker driver's engines), killing what is left in them.
	if _, err := process.CleanCgroups(name); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// killIn ends the processes inside a namespace, by PID: SIGTERM, then
// SIGKILL for those still there after a grace period.
func killIn(ns string) error {
	pids, err := namespace.Pids(ns)
	if err != nil || len(pids) == 0 {
		return err
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	gone := func() (bool, error) { left, _ := namespace.Pids(ns); return len(left) == 0, nil }
	if poll.Until(context.Background(), 2*time.Second, 20*time.Millisecond, gone) == nil {
		return nil
	}
	left, _ := namespace.Pids(ns)
	for _, p := range left {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return nil
}

// Labs finds every lab by the marks of its namespaces; namespaces without
// cnperf's mark are not listed.
func (Driver) Labs() ([]lab.Info, error) {
	nss, err := namespace.List(lab.Prefix)
	if err != nil {
		return nil, err
	}
	byLab := map[string]*lab.Info{}
	var order []string
	for _, ns := range nss {
		m, ok := readMark(ns)
		if !ok || !strings.HasPrefix(ns, lab.Prefix+m.Lab+"-") {
			continue
		}
		if byLab[m.Lab] == nil {
			byLab[m.Lab] = &lab.Info{Name: m.Lab, Mode: m.Mode, Owner: m.Owner, OwnerText: m.Owner.String()}
			order = append(order, m.Lab)
		}
		byLab[m.Lab].Namespaces = append(byLab[m.Lab].Namespaces, ns)
	}
	var out []lab.Info
	for _, name := range order {
		out = append(out, *byLab[name])
	}
	return out, nil
}

// namespaces lists the namespaces of one lab: those named for it that
// carry its mark. A namespace that only looks like the lab's by name (a
// user's cnperf-dev-1) is not cnperf's and is left alone. The '-' after the
// lab name keeps lab "a" from matching lab "a_b".
func namespaces(name string) ([]string, error) {
	nss, err := namespace.List(lab.Prefix + name + "-")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range nss {
		if m, ok := readMark(ns); ok && m.Lab == name {
			out = append(out, ns)
		}
	}
	return out, nil
}
