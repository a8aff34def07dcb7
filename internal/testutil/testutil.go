// Package testutil holds helpers for cnperf's root integration tests.
package testutil

import (
	"os"
	"testing"
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
