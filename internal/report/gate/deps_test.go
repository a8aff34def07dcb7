package gate

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Judging a run reads it as the report does: it must not link the code
// that builds labs, so that CI can judge runs on a machine without
// namespaces or Docker.
func TestJudgingLinksNoLabCode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/cnperf/cnperf/internal/"
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", mod+"report/gate").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, root := range []string{mod + "lab", mod + "run", "github.com/docker", "github.com/moby", "github.com/vishvananda"} {
			if dep == root || strings.HasPrefix(dep, root+"/") {
				t.Errorf("gate depends on %s", dep)
			}
		}
	}
}
