package registry_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/testutil/deps"
)

// TestReadingRunsLinksNoWorkloadImplementation: what reads a spec or a
// run (the workloads' descriptors, the spec, record, analysis, report)
// links no workload's server or client, no data grid and no command-line
// framework: the implementations are reached only through package
// commands, which the command line alone imports.
func TestReadingRunsLinksNoWorkloadImplementation(t *testing.T) {
	const mod = deps.Internal
	deps.Forbid(t, []string{"workload", "workload/descriptors", "workload/registry", "spec", "record", "analysis", "report"},
		[]string{"github.com/olric-data/", "github.com/buraksezer/", "github.com/spf13/cobra", "github.com/spf13/pflag",
			"github.com/valyala/fasthttp", mod + "workload/pingpong/server", mod + "workload/pingpong/siege",
			mod + "workload/stream", mod + "workload/rr", mod + "workload/udp", mod + "workload/grid",
			mod + "workload/shell", mod + "workload/serverkit", mod + "workload/commands"})
}
