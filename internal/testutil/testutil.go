// Package testutil holds helpers for cnperf's root integration tests.
package testutil

import (
	"os"
	"testing"

	"github.com/cnperf/cnperf/internal/engine"
)

// RequireRoot skips a test that needs root, except under CI (CI=true), where
// a skipped integration test would hide a broken lab: there it fails.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("integration test needs root (CAP_NET_ADMIN) and CI runs as root")
	}
	t.Skip("needs root (CAP_NET_ADMIN)")
}

// RequireDocker is RequireRoot plus Docker Engine binaries (docker.io), for
// the docker driver's tests; CI installs them, so there it fails instead of
// skipping.
func RequireDocker(t testing.TB) {
	t.Helper()
	RequireRoot(t)
	if err := engine.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI installs docker.io with scripts/install-deps.sh", err)
		}
		t.Skip(err)
	}
}
