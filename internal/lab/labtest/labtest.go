// Package labtest is a lab driver for tests that needs no root: its labs
// live in memory, their hosts are addresses of this machine's loopback
// (127.70.LAB.HOST), and its runtime runs the workload's real servers and
// clients there by exec, recording what the runner asked it to start. A
// recipe test registers it with one line, runs a spec through run.Run and
// reads back what the runner asked of the driver and the runtime. Only
// tests link it.
package labtest

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/process"
)

// Name is the driver's name in specs.
const Name = "loopback"

// Driver builds the bare mode (a process on each host's address) in
// memory. Its labs share this machine's stack, so it says so
// (Capabilities.SharesStack) and the runner keeps their ports apart.
type Driver struct {
	lab.BaseDriver
	mu  sync.Mutex
	up  map[string]bool // labs up, by name
	log Log
}

// Log is what the runner asked of the driver: each lab's config as Up got
// it, the labs Down removed, and each lab's runtime (kept after Down).
type Log struct {
	Ups      []lab.Config
	Downs    []string
	Runtimes map[string]*Runtime
}

func (*Driver) Name() string                          { return Name }
func (*Driver) Options(lab.OptionsInput) (any, error) { return nil, nil }
func (*Driver) Preflight(lab.PreflightInput) error    { return nil }
func (*Driver) Builds(m lab.Mode) bool                { return m.Name() == "bare" }

// Capabilities: the labs share this machine's stack.
func (*Driver) Capabilities(any) lab.Capabilities { return lab.Capabilities{SharesStack: true} }

// Validate refuses another mode, conditions, a chain and a lab that is up.
func (d *Driver) Validate(cfg lab.Config) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.Builds(cfg.Mode) || !cfg.Conditions.Empty() || cfg.Topology.Chain || d.up[cfg.Name] {
		return fmt.Errorf("lab %s: the %s driver builds bare alone, once, with no conditions and no chain", cfg.Name, Name)
	}
	return nil
}

// Up gives host i of the lab built nth the address 127.70.n.i (n counts
// to 255 and starts over) and each endpoint its host's address and port.
func (d *Driver) Up(l *lab.Lab, cfg lab.Config) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := byte(len(d.log.Ups) + 1)
	for i, hs := range cfg.Topology.Hosts {
		l.Hosts = append(l.Hosts, lab.Host{Name: hs.Name, Index: i + 1, Addr: net.IPv4(127, 70, n, byte(i+1)).String()})
	}
	for _, e := range l.NewBuild().Endpoints {
		addr := lab.HostPort(e.Host.Addr, e.Port(cfg.Port))
		l.Endpoints = append(l.Endpoints, lab.Endpoint{Host: e.Host.Name, Listen: addr, External: addr, Internal: addr, Path: []string{e.Host.Name + ":lo"}})
	}
	rt := &Runtime{}
	l.Runtime = rt
	if d.up == nil {
		d.up, d.log.Runtimes = map[string]bool{}, map[string]*Runtime{}
	}
	d.up[cfg.Name], d.log.Runtimes[cfg.Name] = true, rt
	d.log.Ups = append(d.log.Ups, cfg)
	return nil
}

// Down forgets the lab; its processes are the runner's to stop.
func (d *Driver) Down(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.up[name] {
		delete(d.up, name)
		d.log.Downs = append(d.log.Downs, name)
	}
	return nil
}

// Labs lists the labs up (nobody owns them: a test removes its own).
func (d *Driver) Labs() ([]lab.Info, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []lab.Info
	for name := range d.up {
		out = append(out, lab.Info{Name: name, Mode: "bare", OwnerText: "none"})
	}
	return out, nil
}

// Log returns what the runner asked of the driver so far.
func (d *Driver) Log() Log {
	d.mu.Lock()
	defer d.mu.Unlock()
	return Log{Ups: slices.Clone(d.log.Ups), Downs: slices.Clone(d.log.Downs), Runtimes: d.log.Runtimes}
}

// Started is a process the runner asked a runtime for: a server (Name is
// its role) or a client.
type Started struct {
	Endpoint lab.Endpoint
	Name     string
	Args     []string
}

// Runtime starts each server and client by exec, in its endpoint's
// namespace when it has one (ep.NS; entering it needs root) and in the
// caller's otherwise, and records what it started. Its processes are in
// no cgroup: their usage is read as for any plain process.
type Runtime struct {
	lab.BaseRuntime
	mu               sync.Mutex
	servers, clients []Started
}

// StartServer runs s.Args on ep, its output to s.Log.
func (r *Runtime) StartServer(ep lab.Endpoint, s lab.Server) (lab.Proc, error) {
	if s.Image != "" || len(s.Args) == 0 {
		return nil, fmt.Errorf("%s server: this runtime runs commands, not images", s.Role)
	}
	f, err := os.Create(s.Log)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child holds its own descriptor
	r.mu.Lock()
	r.servers = append(r.servers, Started{Endpoint: ep, Name: s.Role, Args: slices.Clone(s.Args)})
	r.mu.Unlock()
	return start(ep.NS, s.Args, f, f)
}

// StartClient runs args on ep.
func (r *Runtime) StartClient(ep lab.Endpoint, name string, args []string, stdout, stderr io.Writer) (lab.Proc, error) {
	r.mu.Lock()
	r.clients = append(r.clients, Started{Endpoint: ep, Name: name, Args: slices.Clone(args)})
	r.mu.Unlock()
	return start(ep.NS, args, stdout, stderr)
}

// Started returns the servers and the clients the runner started, in
// order.
func (r *Runtime) Started() (servers, clients []Started) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.servers), slices.Clone(r.clients)
}

// Alive: it runs no daemons.
func (*Runtime) Alive() error { return nil }

// Sight: its processes are this machine's, in no cgroup of cnperf's.
func (*Runtime) Sight() lab.Sight { return lab.Sight{Local: true} }

// start runs args by exec, in ns when set ("": the caller's namespace),
// in a process group of its own and dying with the test.
func start(ns string, args []string, stdout, stderr io.Writer) (lab.Proc, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	run := cmd.Start
	if ns != "" {
		// Started from a thread inside the namespace, the child is born in it.
		run = func() error { return namespace.Do(ns, cmd.Start) }
	}
	if err := run(); err != nil {
		return nil, err
	}
	return process.Watch(cmd), nil
}
