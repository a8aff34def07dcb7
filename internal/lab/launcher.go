package lab

import (
	"io"
	"time"

	"github.com/cnperf/cnperf/internal/lab/process"
)

// Proc is a server or client process as the runner handles it, wherever
// it runs: a container here, or a process in a pod.
type Proc interface {
	PID() int
	Done() <-chan struct{}
	Exited() (bool, error)
	Stop(grace time.Duration) error
	Usage() (process.Usage, error)
}

// Launcher is a Runtime that runs the workload's processes itself, where
// the runner cannot enter the endpoints' namespaces (a cluster's pods).
// Its processes are Bounders too: they say when a server listens.
type Launcher interface {
	StartServer(ep Endpoint, name string, args []string, log io.Writer) (Proc, error)
	StartClient(ep Endpoint, name string, args []string, stdout, stderr io.Writer) (Proc, error)
}

// Bounder is a process that can say whether it listens on a port, over
// every protocol given.
type Bounder interface {
	Bound(port int, protocols []string) bool
}
