// Package lab holds what every lab has whatever builds it: the record of a
// lab that is up, the handle a mode builds with, the topology (hosts and
// the workload's endpoints on them), and the lifecycle (up, down, list,
// clean) over a Driver. The drivers (netns: emulated hosts built by hand;
// docker: Docker Engines) are packages of their own that import this one;
// internal/lab/drivers lists them.
package lab

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Prefix starts the name of every namespace cnperf creates.
const Prefix = "cnperf-"

// The lab's record types, under the names modes and drivers use.
type (
	Host           = record.Host
	Endpoint       = record.Endpoint
	RouterInfo     = record.RouterInfo
	DockerEndpoint = record.DockerEndpoint
	Port           = record.Port
)

// Mode is a network setup, by name. What it takes to build it on a driver
// is that driver's interface (netns.Mode, docker.Mode): a mode that does
// not implement it cannot run there, and Up says so before building.
type Mode interface {
	Name() string
	Summary() string
}

// Lab is a lab that is up: its record (what run.json stores), the
// processes its mode runs for the lab's lifetime, and what its driver keeps
// running (Runtime).
type Lab struct {
	record.Lab

	// Runtime is what the driver keeps for the lab while it is up: the
	// launcher of the workload's processes, and its daemons (the docker
	// driver's engines). Up sets it.
	Runtime Runtime
	// Spawner starts the processes the lab's mode and conditions run for
	// the lab's lifetime; the driver that builds the hosts sets it (nil:
	// the driver runs none).
	Spawner Spawner

	exe   string
	logs  string
	procs map[string]Proc
}

// Config says what to build.
type Config struct {
	Name string
	Mode Mode
	// Topology is the lab's hosts and the endpoints on each.
	Topology Topology
	Port     int // the endpoints' port, published over TCP
	// Publish adds ports (e.g. UDP, or other workloads' servers) that modes
	// with NAT publish besides Port.
	Publish []Port
	// Driver names the driver (Catalog.Driver; "" is the default, netns).
	// Exe is the cnperf binary the lab's processes (overlay routers) and
	// the docker driver's image run.
	Driver string
	Exe    string
	// Logs is where processes a mode starts (overlay routers) log; none
	// when empty.
	Logs string
	// Conditions change what the lab's hosts may use (CPUs, bandwidth,
	// offloads, TCP buffers); drivers that can apply them do so after the
	// mode, the others refuse them.
	Conditions conditions.Set
	// Links are the links of the topology to impair (delay, loss, rate,
	// flaps); drivers that cannot build them refuse them (Capabilities.ImpairsLinks).
	Links []conditions.Link
	// Disrupt are the cluster daemons to stop and start in each cell;
	// drivers that cannot refuse them (Capabilities.Disrupts).
	Disrupt []conditions.Disruption
	// Owner is the process the lab belongs to: `cnperf clean` removes the
	// lab once it has exited. owner.None (lab up) is nobody's: the lab stays
	// until removed by name or by `clean --all`.
	Owner owner.ID
	// Options are the driver's own options, as its Options decoded them
	// (nil: its defaults).
	Options any
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]{0,39}$`)

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

// ContainerNS returns the namespace name of the container on a host (its
// first; SlotNS names the others).
func ContainerNS(lab, host string) string { return NS(lab, host) + "-c" }

// Up builds a lab with driver d. It checks what any driver would refuse
// (name, mode, topology, ports), then what d refuses, before building
// anything; on an error after that it removes what it built.
func Up(d Driver, cfg Config) (l *Lab, err error) {
	if err := ValidName(cfg.Name); err != nil {
		return nil, err
	}
	if cfg.Mode == nil {
		return nil, errors.New("lab: no mode given")
	}
	if err := checkTopology(cfg.Topology); err != nil {
		return nil, err
	}
	publish := append([]Port{{Number: cfg.Port, Protocol: "tcp"}}, cfg.Publish...)
	for _, p := range publish {
		if p.Number < 1 || p.Number > 65535 || (p.Protocol != "tcp" && p.Protocol != "udp") {
			return nil, fmt.Errorf("lab: bad port %d/%s", p.Number, p.Protocol)
		}
	}
	if err := checkShiftedPorts(cfg.Topology, publish); err != nil {
		return nil, err
	}
	caps := d.Capabilities(cfg.Options)
	if cfg.Conditions.NodePlacement != "" && !caps.PlacesOnNodes {
		return nil, fmt.Errorf("lab: node_placement places pods on Kubernetes nodes; the %s driver has none", d.Name())
	}
	if cfg.Conditions.AsksPolicy() && !caps.AppliesPolicies {
		return nil, fmt.Errorf("lab: network_policy applies NetworkPolicies on Kubernetes; the %s driver has none", d.Name())
	}
	if cfg.Conditions.Services != 0 && !caps.PlacesOnNodes {
		return nil, fmt.Errorf("lab: services creates Kubernetes Services; the %s driver has none", d.Name())
	}
	// Validate comes before the removal on error is armed: it refuses a lab
	// that already exists, which is not this call's to remove.
	if err := d.Validate(cfg); err != nil {
		return nil, err
	}
	topo := cloneTopology(cfg.Topology)
	l = &Lab{Lab: record.Lab{Name: cfg.Name, Mode: cfg.Mode.Name(), Driver: d.Name(), Publish: publish,
		Conditions: cfg.Conditions, Topology: &topo}, exe: cfg.Exe, logs: cfg.Logs}
	if cfg.Conditions.HasIPv6() {
		l.IPFamily = cfg.Conditions.Family()
	}
	defer func() {
		if err != nil {
			if derr := Down(cfg.Name, d); derr != nil {
				err = fmt.Errorf("%w (and removing the half-built lab failed: %v)", err, derr)
			}
			l = nil
		}
	}()
	if err := d.Up(l, cfg); err != nil {
		return nil, err
	}
	if err := assignRoles(l); err != nil {
		return nil, err
	}
	return l, nil
}

// Endpoint returns the endpoint that plays role.
func (l *Lab) Endpoint(role string) (Endpoint, error) {
	for _, e := range l.Endpoints {
		if e.Role == role {
			return e, nil
		}
	}
	return Endpoint{}, fmt.Errorf("lab %s has no endpoint with role %q", l.Name, role)
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

// Namespaces adds to listed (the namespaces named for the lab) those on
// this machine that its hosts and endpoints run in outside them: an
// existing engine's host (the machine's own), Docker's sandboxes. Hosts
// and endpoints of other machines or a cluster have none here ("").
func (l *Lab) Namespaces(listed []string) []string {
	if l.Runtime != nil && !l.Runtime.Sight().Local {
		return listed
	}
	for _, h := range l.Hosts {
		if h.NS != "" && !slices.Contains(listed, h.NS) {
			listed = append(listed, h.NS)
		}
	}
	for _, ep := range l.Endpoints {
		if ep.NS != "" && !slices.Contains(listed, ep.NS) {
			listed = append(listed, ep.NS)
		}
	}
	return listed
}

// HostCPUs are the CPUs a server host's processes may use (nil: any).
func (l *Lab) HostCPUs() []int { return l.Conditions.HostCPUs() }

// Exe is the cnperf binary the lab's processes and images run ("" when
// none was given).
func (l *Lab) Exe() string { return l.exe }

// StartProcess starts a process the lab needs for its lifetime (an overlay
// router, the CPU stress) in ns as a container with its own cgroup, so its
// CPU and memory are accounted; Down ends it with the lab. Args are
// cnperf's arguments: the lab's binary runs them.
func (l *Lab) StartProcess(name, ns string, cpus []int, args []string) error {
	if l.exe == "" {
		return fmt.Errorf("lab %s: no cnperf binary to start %s with", l.Name, name)
	}
	_, err := l.StartCommand(name, ns, cpus, append([]string{l.exe}, args...), nil, "")
	return err
}

// StartCommand is StartProcess for another program (argv[0]), with env
// added to its environment (Open vSwitch's daemons, etcd, flanneld), whose
// output is kept even when the lab keeps no logs: in the lab's log of it
// when it keeps them, else at fallback ("": discarded). It returns where
// the output goes ("" for nowhere), so that a mode can quote a daemon's
// last line when the daemon fails.
func (l *Lab) StartCommand(name, ns string, cpus []int, argv, env []string, fallback string) (string, error) {
	out, path := io.Writer(io.Discard), ""
	switch {
	case l.logs != "":
		path = filepath.Join(l.logs, l.Name+"-"+name+".log")
	case fallback != "":
		path = fallback
	}
	if path != "" {
		f, err := os.Create(path)
		if err != nil {
			return "", err
		}
		defer f.Close() // the child holds its own descriptor
		out = f
	}
	return path, l.startCommand(name, ns, cpus, argv, env, out)
}

func (l *Lab) startCommand(name, ns string, cpus []int, argv, env []string, out io.Writer) error {
	if l.Spawner == nil {
		return fmt.Errorf("lab %s: the %s driver runs no processes of its own (%s)", l.Name, l.Driver, name)
	}
	p, err := l.Spawner.Spawn(Daemon{Lab: l.Name, Name: name, NS: ns, CPUs: cpus, Argv: argv, Env: env, Out: out})
	if err != nil {
		return err
	}
	if l.procs == nil {
		l.procs = map[string]Proc{}
	}
	l.procs[name] = p
	return nil
}

// Processes returns the processes the lab runs, by name.
func (l *Lab) Processes() map[string]Proc { return l.procs }

// Alive reports a process of the lab's that has died.
func (l *Lab) Alive() error {
	for name, p := range l.procs {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s exited (%v); see logs/%s-%s.log", name, err, l.Name, name)
		}
	}
	return nil
}

// Down removes a lab whatever built it: each driver removes what it built
// (found on the machine, so this works after a crash too, its processes'
// cgroups among it), then the lab's modes' state directory goes. Drivers later in ds may build
// on earlier ones' hosts (docker's emulated hosts are netns's), so they are
// asked last first. Removing a lab that does not exist is not an error.
func Down(name string, ds ...Driver) error {
	if err := ValidName(name); err != nil {
		return err
	}
	var errs []error
	for i := len(ds) - 1; i >= 0; i-- {
		if err := ds[i].Down(name); err != nil {
			errs = append(errs, err)
		}
	}
	// A driver that could not remove its part (a cluster that did not
	// answer) keeps what finds it again, for the next down or clean.
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return removeState(name)
}

// Info is what `cnperf lab ls` shows of a lab found on the machine.
type Info struct {
	Name       string   `json:"name"`
	Mode       string   `json:"mode"`
	Owner      owner.ID `json:"-"`
	OwnerText  string   `json:"owner"` // PID.START, or none (lab up)
	Namespaces []string `json:"namespaces"`
}

// List finds every lab on the machine that one of ds built, each once:
// the first driver to find a lab names its mode and owner.
func List(ds ...Driver) ([]Info, error) {
	var out []Info
	at := map[string]int{}
	var errs []error
	for _, d := range ds {
		labs, err := d.Labs()
		if err != nil {
			errs = append(errs, err)
		}
		for _, in := range labs {
			if i, ok := at[in.Name]; ok {
				out[i].Namespaces = append(out[i].Namespaces, in.Namespaces...)
				continue
			}
			at[in.Name] = len(out)
			out = append(out, in)
		}
	}
	return out, errors.Join(errs...)
}

// Cleaned says what Clean removed and what it left to a live owner.
type Cleaned struct {
	Removed []Info // labs (and cgroups or state of labs) removed
	Spared  []Info // labs whose owner still runs, or nobody's without all
}

// Clean removes what dead cnperf processes left: every lab whose owner has
// exited, and cgroups and mode state of labs that have nothing else left.
// With all, it removes every lab, nobody's (lab up) and live owners' too.
// What is not marked as cnperf's is never touched.
func Clean(all bool, ds ...Driver) (Cleaned, error) {
	var res Cleaned
	labs, err := List(ds...)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	keep := map[string]bool{} // labs left to a live owner
	done := map[string]bool{}
	for _, l := range labs {
		// Nobody (lab up, or an owner nothing recorded) is never gone.
		if !all && !l.Owner.Gone() {
			keep[l.Name] = true
			res.Spared = append(res.Spared, l)
			continue
		}
		if err := Down(l.Name, ds...); err != nil {
			errs = append(errs, err)
			continue
		}
		done[l.Name] = true
		res.Removed = append(res.Removed, l)
	}
	// Cgroups and mode state of labs with nothing else left: their owner
	// died between removing the lab and these.
	orphans := map[string]bool{}
	for _, d := range ds {
		for _, name := range d.LeftoverLabs() {
			orphans[name] = true
		}
	}
	for _, name := range stateLabs() {
		orphans[name] = true
	}
	for name := range orphans {
		if keep[name] || ValidName(name) != nil {
			continue
		}
		var cerr error
		for _, d := range ds {
			cerr = errors.Join(cerr, d.RemoveLeftovers(name))
		}
		serr := removeState(name)
		if cerr != nil || serr != nil {
			errs = append(errs, cerr, serr)
			continue
		}
		if !done[name] {
			done[name] = true
			res.Removed = append(res.Removed, Info{Name: name, Mode: "?", OwnerText: "?"})
		}
	}
	return res, errors.Join(errs...)
}
