package report

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Reading, analysing and reporting stored runs must not link the code that
// builds labs: data flows one way, spec → lab → workload → record →
// analysis → report, and a run is re-analysed on machines without Docker
// or namespaces.
func TestReadingRunsLinksNoLabCode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/cnperf/cnperf/internal/"
	forbidden := []string{mod + "lab", mod + "run", "github.com/docker/", "github.com/moby/", "github.com/vishvananda/"}
	for _, pkg := range []string{"record", "analysis", "report", "report/export", "report/importer", "report/figure"} {
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
