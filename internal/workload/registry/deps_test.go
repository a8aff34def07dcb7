package registry_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestReadingRunsLinksNoWorkloadImplementation: what reads a spec or a
// run (the workloads' descriptors, the spec, record, analysis, report)
// links no workload's server or client, no data grid and no command-line
// framework: the implementations are reached only through package
// commands, which the command line alone imports.
func TestReadingRunsLinksNoWorkloadImplementation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/cnperf/cnperf/internal/"
	forbidden := []string{"github.com/olric-data/", "github.com/buraksezer/", "github.com/spf13/cobra", "github.com/spf13/pflag",
		mod + "workload/stream", mod + "workload/rr", mod + "workload/udp", mod + "workload/grid",
		mod + "workload/shell", mod + "workload/commands"}
	for _, pkg := range []string{"workload", "workload/descriptors", "workload/registry", "spec", "record", "analysis", "report"} {
		out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", mod+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				root := strings.TrimSuffix(f, "/")
				if dep == root || strings.HasPrefix(dep, root+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
