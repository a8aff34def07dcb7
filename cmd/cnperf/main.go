// Command cnperf measures what container networking costs: it builds the
// network setups containers run on as real kernel topologies, drives
// workloads through them and stores every sample with the system's
// description.
package main

import (
	"os"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/process"
)

func main() {
	process.AwaitStart() // a container's server waits until it is in its cgroups
	process.CloseInheritedOnExec()
	os.Exit(cli.Main(drivers.Catalog(), os.Args[1:], os.Stdout, os.Stderr))
}
