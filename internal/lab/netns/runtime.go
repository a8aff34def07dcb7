package netns

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/conntrack"
	"github.com/cnperf/cnperf/internal/lab/firewall"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/process"
)

// Runtime starts a lab's processes in its hosts' namespaces: each server
// and client a process in the endpoint's namespace (a container, with a
// cgroup and namespaces of its own, where the endpoint is one), pinned to
// the lab's host CPUs. The docker driver starts the processes of
// endpoints without a sandbox through it too.
type Runtime struct {
	lab.BaseRuntime // no node daemons
	Lab             string
	CPUs            []int
	// flaps are the lab's links' flap schedules, carried out in each cell
	// (Flap, links.go).
	flaps []flapPlan
}

// NewRuntime is the runtime of l, whose hosts are up.
func NewRuntime(l *lab.Lab) *Runtime { return &Runtime{Lab: l.Name, CPUs: l.HostCPUs()} }

// StartServer starts s.Args in ep's namespace, its output to s.Log. It
// runs cnperf's binary or the spec's own command from this machine's file
// system: an image is for drivers that run images, and a server that is
// only an image cannot run here (the spec refuses it up front).
func (r *Runtime) StartServer(ep lab.Endpoint, s lab.Server) (lab.Proc, error) {
	if len(s.Args) == 0 {
		return nil, fmt.Errorf("%s server: image %s: the %s driver runs commands, not images", s.Role, s.Image, Name)
	}
	logf, err := os.Create(s.Log)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	p, err := process.Start(process.Spec{Lab: r.Lab, Name: s.Role, NetNS: ep.NS, Container: ep.Container,
		Args: s.Args, Stdout: logf, Stderr: logf, CPUs: r.CPUs})
	if err != nil {
		return nil, fmt.Errorf("%s server %q: %w", s.Role, s.Args[0], err)
	}
	return p, nil
}

// StartClient starts args in ep's namespace.
func (r *Runtime) StartClient(ep lab.Endpoint, name string, args []string, stdout, stderr io.Writer) (lab.Proc, error) {
	return process.Start(process.Spec{Lab: r.Lab, Name: name, NetNS: ep.NS, Container: ep.Container,
		Args: args, Stdout: stdout, Stderr: stderr, CPUs: r.CPUs})
}

// Alive: the netns driver runs no daemons of its own; the lab's own
// processes are the lab's to watch (lab.Lab.Alive).
func (r *Runtime) Alive() error { return nil }

// Sight: every process is this machine's, in cgroups cnperf made.
func (r *Runtime) Sight() lab.Sight { return lab.Sight{Local: true, Own: true} }

// Conntrack reads the tables of the lab's namespaces that track
// connections, each from inside it (the count is per namespace).
func (r *Runtime) Conntrack() (map[string]conntrack.Reading, error) {
	nss, err := namespaces(r.Lab)
	if err != nil {
		return nil, err
	}
	out := map[string]conntrack.Reading{}
	for _, ns := range nss {
		var rd conntrack.Reading
		var ok bool
		if err := namespace.Do(ns, func() (err error) { rd, ok, err = conntrack.Read(); return err }); err != nil {
			return nil, fmt.Errorf("conntrack in %s: %w", ns, err)
		}
		if ok {
			out[strings.TrimPrefix(ns, lab.Prefix+r.Lab+"-")] = rd
		}
	}
	return out, nil
}

// Record reads the delay lines' counters into the lab's record.
func (r *Runtime) Record(l *lab.Lab) error { return ReadCounters(l) }

// ReadCounters fills the delay lines' counters (the zones', each impaired
// link's) into the lab's record, before the lab is removed; the docker
// driver's emulated hosts share it.
func ReadCounters(l *lab.Lab) error {
	return errors.Join(readZoneCounters(l), readLinkCounters(l))
}

// Spawner starts a lab's processes for its lifetime as containers with
// their own cgroups in a host's namespace, so that their CPU and memory
// are accounted; Down ends them with the lab.
type Spawner struct{}

// Spawn starts d.
func (Spawner) Spawn(d lab.Daemon) (lab.Proc, error) {
	return process.Start(process.Spec{Lab: d.Lab, Name: d.Name, NetNS: d.NS, Container: true, Daemon: true, CPUs: d.CPUs,
		Args: d.Argv, Env: d.Env, Stdout: d.Out, Stderr: d.Out})
}

// Options: the netns driver has none of its own.
func (Driver) Options(in lab.OptionsInput) (any, error) { return nil, nil }

// Preflight wants the capabilities to make namespaces and devices, and a
// firewall tool for the modes' rules.
func (Driver) Preflight(lab.PreflightInput) error { return Preflight() }

// Preflight is the netns driver's preflight, which the drivers that build
// on its hosts (docker) run too.
func Preflight() error {
	if err := NeedNetAdmin(); err != nil {
		return err
	}
	if err := firewall.Available(); err != nil {
		return lab.Failure{Err: err}
	}
	return nil
}

// NeedNetAdmin refuses to go on without CAP_NET_ADMIN and CAP_SYS_ADMIN:
// namespaces, devices and mounts need them.
func NeedNetAdmin() error { return namespace.NeedAdmin() }

// ChainMode says whether m can run on a chain of hosts.
func (Driver) ChainMode(m lab.Mode) error { return CheckChainMode(m) }

// Capabilities: a spec's own server command runs from this machine's
// file system (a lab's container shares the mount tree); the driver builds
// chains and impairs its labs' links.
func (Driver) Capabilities(any) lab.Capabilities {
	return lab.Capabilities{RunsLocalFiles: true, Chains: true, ImpairsLinks: true}
}

// LeftoverLabs lists the labs that have cgroups left.
func (Driver) LeftoverLabs() []string { return process.CgroupLabs() }

// RemoveLeftovers removes a lab's cgroups, killing what is left in them.
func (Driver) RemoveLeftovers(name string) error {
	_, err := process.CleanCgroups(name)
	return err
}
