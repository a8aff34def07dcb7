// Command cnperf measures what container networking costs: it builds the
// network setups containers run on as real kernel topologies, drives
// workloads through them and stores every sample with the system's
// description.
package main

import (
	"os"

	"github.com/cnperf/cnperf/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
