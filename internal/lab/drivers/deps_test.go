package drivers

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRunnerAndCLILinkNoDriver: the runner and the CLI take the drivers
// and modes as a lab.Catalog (this package makes the binary's) and link
// none of them, nor a driver's building blocks: a new driver is its
// package and a line in All, and touches neither.
func TestRunnerAndCLILinkNoDriver(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/cnperf/cnperf/internal/"
	forbidden := []string{
		mod + "lab/drivers", mod + "lab/modes", // the registry and every mode
		mod + "lab/netns", mod + "lab/docker", mod + "lab/kube", // the drivers and below
		mod + "lab/process", mod + "lab/firewall", // the netns driver's blocks
		"github.com/docker/", "github.com/moby/", "k8s.io/",
	}
	for _, pkg := range []string{"run", "cli", "machine"} {
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
