package lab

import (
	"github.com/cnperf/cnperf/internal/lab/container"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Build is the handle a driver gives a mode: what to build (the hosts that
// carry endpoints, the port, the ports to publish, the conditions) and the
// lab's services (a state directory, processes for the lab's lifetime).
// Drivers wrap it with their own building blocks (netns.Build,
// docker.Build).
type Build struct {
	Lab  string // the lab's name
	Mode string // the mode's name
	// Hosts are the hosts that carry endpoints, in the topology's order;
	// the mode returns one Endpoint for each, in this order.
	Hosts []Host
	// Port is the endpoints' port (TCP); Publish lists every port a mode
	// with NAT publishes, Port first, like docker -p.
	Port       int
	Publish    []Port
	Conditions conditions.Set

	l *Lab
}

// NewBuild returns the handle for the mode on l, whose hosts the driver has
// built: the hosts that the topology gives endpoints.
func (l *Lab) NewBuild() *Build {
	carry := map[string]bool{}
	if l.Topology != nil {
		for _, h := range l.Topology.Hosts {
			carry[h.Name] = len(h.Endpoints) > 0
		}
	}
	var hosts []Host
	for _, h := range l.Hosts {
		if carry[h.Name] {
			hosts = append(hosts, h)
		}
	}
	return &Build{Lab: l.Name, Mode: l.Mode, Hosts: hosts, Port: l.Publish[0].Number, Publish: l.Publish,
		Conditions: l.Conditions, l: l}
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
// vSwitch's daemons): see Lab.StartCommand.
func (b *Build) StartCommand(name, ns string, cpus []int, argv, env []string) error {
	return b.l.StartCommand(name, ns, cpus, argv, env)
}

// Process returns a process the mode started, or nil.
func (b *Build) Process(name string) *container.Process { return b.l.procs[name] }
