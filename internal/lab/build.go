package lab

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Build is the handle a driver gives a mode: what to build (the endpoints
// and the hosts they are on, the port, the ports to publish, the
// conditions) and the lab's services (a state directory, processes for the
// lab's lifetime). Drivers wrap it with their own building blocks
// (netns.Build, docker.Build).
type Build struct {
	Lab  string // the lab's name
	Mode string // the mode's name
	// Endpoints are what the mode builds, in the topology's order; it
	// returns one Endpoint for each, in this order.
	Endpoints []EndpointAt
	// Hosts are the hosts that carry endpoints, in the topology's order,
	// each once; AllHosts are all the lab's hosts, also those without
	// endpoints (a client outside the cluster), which modes that route
	// container addresses teach their routes.
	Hosts    []Host
	AllHosts []Host
	// Port is the endpoints' port (TCP); Publish lists every port a mode
	// with NAT publishes, Port first, like docker -p. An endpoint uses them
	// shifted by its EndpointAt.Shift.
	Port       int
	Publish    []Port
	Conditions conditions.Set

	l *Lab
}

// EndpointAt is one endpoint a mode builds: on which host, for which role,
// and its slot among that host's endpoints.
type EndpointAt struct {
	Host Host
	Role string
	// Slot counts the host's endpoints from 0. Slot 0 keeps the names and
	// addresses a host's only endpoint always had, so labs with one
	// endpoint per host build as before; later slots get their own (NS,
	// Dev, the address plan's per-slot addresses).
	Slot int
	// Shift is added to every port of the lab at this endpoint (where its
	// servers listen, are published and are dialled), so that endpoints
	// sharing the host's stack or its published ports stay apart: Slot
	// times the span of the lab's ports; 0 for slot 0.
	Shift int
}

// Port is the lab's port p as this endpoint uses it.
func (e EndpointAt) Port(p int) int { return p + e.Shift }

// MaxPerHost bounds a host's endpoints: each slot takes an address in its
// host's /24s of the address plan (plan.go).
const MaxPerHost = 250

// NewBuild returns the handle for the mode on l, whose hosts the driver has
// built, with the endpoints its topology asks for.
func (l *Lab) NewBuild() *Build {
	b := &Build{Lab: l.Name, Mode: l.Mode, AllHosts: l.Hosts, Port: l.Publish[0].Number, Publish: l.Publish,
		Conditions: l.Conditions, l: l}
	if l.Topology == nil {
		return b
	}
	span := portSpan(l.Publish)
	byName := map[string]Host{}
	for _, h := range l.Hosts {
		byName[h.Name] = h
	}
	for _, spec := range l.Topology.Hosts {
		h, ok := byName[spec.Name]
		if !ok || len(spec.Endpoints) == 0 {
			continue
		}
		b.Hosts = append(b.Hosts, h)
		for k, e := range spec.Endpoints {
			b.Endpoints = append(b.Endpoints, EndpointAt{Host: h, Role: e.Role, Slot: k, Shift: k * span})
		}
	}
	return b
}

// ByHost builds every endpoint with build and returns what it built in
// b.Endpoints' order. A host's endpoints are built one after the other, in
// slot order (slot 0 lays out what the host's later ones share); hosts are
// built side by side, a few at a time, as all their work is inside their
// own namespaces: it is what keeps a lab of 250 hosts from taking 250
// times one host's build, which waits on iptables programs and the kernel.
// build must not touch what other hosts' builds touch (a mode's shared
// maps, the lab's processes). After an error no further host is started.
func (b *Build) ByHost(build func(e EndpointAt) (Endpoint, error)) ([]Endpoint, error) {
	byHost := map[string][]int{}
	for i, e := range b.Endpoints {
		byHost[e.Host.Name] = append(byHost[e.Host.Name], i)
	}
	out := make([]Endpoint, len(b.Endpoints))
	errs := make([]error, len(b.Hosts))
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed bool
	)
	sem := make(chan struct{}, buildWorkers())
	for hi, h := range b.Hosts {
		sem <- struct{}{}
		mu.Lock()
		stop := failed
		mu.Unlock()
		if stop {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			for _, i := range byHost[h.Name] {
				ep, err := build(b.Endpoints[i])
				if err != nil {
					errs[hi] = fmt.Errorf("host %s: %w", h.Name, err)
					mu.Lock()
					failed = true
					mu.Unlock()
					return
				}
				out[i] = ep
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// EachHost runs fn for each of hosts side by side, as ByHost does, and
// joins the errors: work such as routes that every host of the lab needs.
func EachHost(hosts []Host, fn func(h Host) error) error {
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, buildWorkers())
	for i, h := range hosts {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = fn(h)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// buildWorkers is how many hosts are built at once: a host's build is
// half program runs and kernel work, half waiting on them, so two per CPU
// keep the CPUs busy without crowding them.
func buildWorkers() int { return 2 * runtime.NumCPU() }

// portSpan is how far apart two slots' ports are: the span of the lab's
// ports, so no slot's ports meet another's.
func portSpan(ps []Port) int {
	if len(ps) == 0 {
		return 1
	}
	lo, hi := ps[0].Number, ps[0].Number
	for _, p := range ps {
		lo, hi = min(lo, p.Number), max(hi, p.Number)
	}
	return hi - lo + 1
}

// Several says whether a host carries more than one endpoint: modes whose
// slots past 0 live on other subnets add the routes between them then.
func (b *Build) Several() bool {
	for _, e := range b.Endpoints {
		if e.Slot > 0 {
			return true
		}
	}
	return false
}

// NS names the namespace of the endpoint's container: cnperf-LAB-HOST-c
// for slot 0, as always, then -c1, -c2, ...
func (b *Build) NS(e EndpointAt) string { return SlotNS(b.Lab, e.Host.Name, e.Slot) }

// SlotNS names the namespace of a host's container in a slot.
func SlotNS(lab, host string, slot int) string {
	if slot == 0 {
		return ContainerNS(lab, host)
	}
	return ContainerNS(lab, host) + strconv.Itoa(slot)
}

// Dev names a mode's per-endpoint device: base for slot 0, as always, then
// base-1, base-2, ... (at most 15 bytes: base at most 11).
func Dev(base string, slot int) string {
	if slot == 0 {
		return base
	}
	return base + "-" + strconv.Itoa(slot)
}

// StateDir returns the mode's own directory for this lab (databases,
// sockets, logs), creating it; Down and Clean remove it, for every mode.
func (b *Build) StateDir() (string, error) { return makeStateDir(b.Lab, b.Mode) }

// StartProcess starts a process the mode needs for the lab's lifetime (an
// overlay router): see Lab.StartProcess.
func (b *Build) StartProcess(name, ns string, cpus []int, args []string) error {
	return b.l.StartProcess(name, ns, cpus, args)
}

// StartCommand starts another program for the lab's lifetime (Open
// vSwitch's daemons), its output kept at fallback when the lab keeps no
// logs: see Lab.StartCommand.
func (b *Build) StartCommand(name, ns string, cpus []int, argv, env []string, fallback string) (string, error) {
	return b.l.StartCommand(name, ns, cpus, argv, env, fallback)
}

// Record is the lab's record, for what a mode adds to it (the daemons it
// ran and what they said). Not from ByHost's builds, which run side by
// side: after them.
func (b *Build) Record() *record.Lab { return &b.l.Lab }

// Process returns a process the mode started, or nil.
func (b *Build) Process(name string) Proc { return b.l.procs[name] }
