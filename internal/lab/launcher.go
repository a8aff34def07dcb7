package lab

import (
	"io"
	"time"

	"github.com/cnperf/cnperf/internal/lab/conntrack"
	"github.com/cnperf/cnperf/internal/record"
)

// Usage is a process's CPU and memory, as run.json stores it.
type Usage = record.Usage

// Proc is a server or client process as the runner handles it, wherever
// it runs: a process in a host's namespace, a container, or a process in a
// pod.
type Proc interface {
	PID() int
	Done() <-chan struct{}
	Exited() (bool, error)
	Stop(grace time.Duration) error
	Usage() (Usage, error)
}

// Server is a server process to start on an endpoint.
type Server struct {
	// Role names it (ping, pong, a socket test's server): in logs, cgroups
	// and container names.
	Role string
	// Args is cnperf's binary and its arguments, or, with Image, the
	// image's command.
	Args []string
	// Image is a container image to run Args in instead of cnperf's own
	// ("" for cnperf's). A driver that runs no images refuses it.
	Image string
	// Log is the file the server's output goes to.
	Log string
}

// Launcher starts the workload's processes on a lab's endpoints, however
// the driver runs them: in the endpoint's namespace and a cgroup (netns),
// through the endpoint's engine (docker), by exec in its pod (kubernetes).
// The runner starts every server and client through it and never asks
// which driver built the lab.
type Launcher interface {
	// StartServer starts s on ep; it runs until stopped.
	StartServer(ep Endpoint, s Server) (Proc, error)
	// StartClient starts args (args[0] is cnperf's binary) on ep, its
	// output to stdout and stderr, until it ends.
	StartClient(ep Endpoint, name string, args []string, stdout, stderr io.Writer) (Proc, error)
}

// Runtime is what a driver keeps for a lab while it is up: the launcher of
// its processes and whatever daemons it runs (the docker driver's engines).
type Runtime interface {
	Launcher
	// Alive reports a daemon of the lab's (an engine, a pod) that died.
	Alive() error
	// Sight says how much of the lab's work this machine's meters see.
	Sight() Sight
	// Record adds to the lab's record, before the lab is removed, what
	// only the running lab knows (the delay line's counters).
	Record(l *Lab) error
	// Flap carries out the lab's link flaps (a spec's links[].flap): the
	// runner calls it as a cell's clients start, and the returned stop
	// as they end; stop brings every link up again and returns when each
	// flap really went down and up, offsets from start.
	Flap(start time.Time) (stop func() []record.Flap)
	// DaemonMeter returns a reader of the node daemons the lab's pods are
	// on (a cluster's network agent, kube-proxy, the kubelet, the
	// container runtime), so that what they spend during a cell is
	// recorded beside the workload's own cost; nil when the lab has none,
	// an error when it has none for a reason to say once.
	DaemonMeter() (DaemonMeter, error)
	// Prepare puts, before the lab's first cell, what its conditions put
	// on state it shares with other labs (a cluster's Services), so that
	// it exists only from the lab's stage of the run on (run.staged).
	Prepare(l *Lab) error
	// Conntrack reads the connection tracking of the lab's namespaces
	// that track connections, by the namespace's name within the lab; nil
	// where the runner cannot read them.
	Conntrack() (map[string]conntrack.Reading, error)
}

// BaseRuntime is what a runtime embeds for the parts it lacks: nothing to
// record, no links that flap, no node daemons.
type BaseRuntime struct{}

func (BaseRuntime) Record(*Lab) error { return nil }

func (BaseRuntime) Flap(time.Time) func() []record.Flap {
	return func() []record.Flap { return nil }
}

func (BaseRuntime) DaemonMeter() (DaemonMeter, error) { return nil, nil }

func (BaseRuntime) Prepare(*Lab) error                               { return nil }
func (BaseRuntime) Conntrack() (map[string]conntrack.Reading, error) { return nil, nil }

// Sight is how much of a lab's work this machine sees. Local is false
// when its processes run on other machines (their load is not this
// machine's); Own is false when some of them run out of the sight of this
// machine's cgroups (pods, containers of an existing engine), so that
// outside work cannot be told from the lab's. Remote is true when the
// runner cannot enter the lab's hosts at all (a cluster's pods): what it
// would do from inside a host's namespace itself (checking that a spec's
// own ping and pong servers speak the protocol) it cannot do there.
type Sight struct {
	Local, Own, Remote bool
}

// Bounder is a process that can say whether it listens on a port, over
// every protocol given.
type Bounder interface {
	Bound(port int, protocols []string) bool
}

// IsRemote says whether l's hosts are out of the runner's reach.
func IsRemote(l *Lab) bool { return l.Runtime != nil && l.Runtime.Sight().Remote }

// Spawner starts the processes a lab needs for its lifetime (overlay
// routers, the CPU stress, Open vSwitch's daemons) in a host's namespace,
// in a cgroup of their own: the driver that builds the hosts provides it.
type Spawner interface {
	Spawn(d Daemon) (Proc, error)
}

// Daemon is a process a lab runs for its lifetime.
type Daemon struct {
	Lab, Name string
	NS        string // the named network namespace to run in
	CPUs      []int  // pinned to these, when set
	Argv, Env []string
	Out       io.Writer // stdout and stderr
}
