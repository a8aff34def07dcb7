// Package deps checks what a package links, as the architecture's tests
// state it (data flows one way; reading a run links no lab; the runner
// links no driver): `go list -deps` of each package, none of whose
// dependencies may be a forbidden one.
package deps

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Internal is the import path every package of cnperf's starts with.
const Internal = "github.com/cnperf/cnperf/internal/"

// Forbid fails t for every dependency of each package (relative to
// Internal) that is, or lies below, a forbidden import path. It skips in
// -short mode: it runs the go command.
func Forbid(t *testing.T, pkgs, forbidden []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range pkgs {
		out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", Internal+pkg).CombinedOutput()
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
