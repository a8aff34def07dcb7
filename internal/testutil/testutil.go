// Package testutil holds helpers for cnperf's root integration tests.
package testutil

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/poll"
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

// SkipUnlessNeeds skips a test of mode m when this machine lacks what the
// mode needs (lab.Needs: the real flanneld's build); CI builds it
// (scripts/test.sh), so there it fails instead.
func SkipUnlessNeeds(t testing.TB, m lab.Mode) {
	t.Helper()
	if err := lab.CheckNeeds(m); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI builds it in scripts/test.sh", err)
		}
		t.Skip(err)
	}
}

var (
	binOnce sync.Once
	binDir  string // what Binary made, for Main to remove
	binPath string
	binErr  error
)

// Main is the TestMain of a package whose tests call Binary: it runs them
// and then removes the binary Binary built, which no single test can (it
// is shared), and which was otherwise left in the temporary directory,
// 60 MB per test run.
func Main(m *testing.M) int {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	return code
}

// Binary builds cnperf once per test binary (static, as the docker
// driver's image and the overlay routers need it) and returns its path.
// The package's TestMain must be Main, which removes it.
func Binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			binErr = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		dir, err := os.MkdirTemp("", "cnperf-test-bin-")
		if err != nil {
			binErr = err
			return
		}
		binDir, binPath = dir, filepath.Join(dir, "cnperf")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/cnperf")
		cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build cnperf: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// AwaitRefused dials addr until the server closes a new connection at
// once (it reads EOF), as a server at its connection cap does; it fails the
// test if that has not happened within 5 s.
func AwaitRefused(t testing.TB, addr string) {
	t.Helper()
	var last error
	err := poll.Until(context.Background(), 5*time.Second, time.Millisecond, func() (bool, error) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false, err
		}
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, last = c.Read(make([]byte, 1))
		c.Close()
		return last == io.EOF, nil
	})
	if err != nil {
		t.Fatalf("%s never refused a connection over its cap: %v (last read: %v)", addr, err, last)
	}
}

// VoluntarySwitches sums this process's threads' voluntary context
// switches, each a wait that ended: a measuring server that is idle must
// not wake the CPU it shares with the tests it answers. ok is false
// without /proc.
func VoluntarySwitches(t testing.TB) (n int, ok bool) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // the thread is gone
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, found := strings.CutPrefix(line, "voluntary_ctxt_switches:"); found {
				k, _ := strconv.Atoi(strings.TrimSpace(v))
				n += k
			}
		}
	}
	return n, true
}

// CheckIdle fails the test when this process's threads woke more than
// most times in each of idleWindows seconds, after settle: an idle
// server's threads must sleep. The garbage an earlier test left is
// collected and returned to the system first, so the runtime's background
// scavenger is not counted. A fault (a loop that ticks, a thread sysmon
// keeps signalling) wakes the threads at a steady rate in every second;
// the runtime's own bursts (a GC cycle, threads of earlier tests winding
// down) land in one, so one quiet second passes. It skips the test
// without /proc.
func CheckIdle(t testing.TB, settle time.Duration, most int) {
	t.Helper()
	debug.FreeOSMemory()
	time.Sleep(settle)
	var seen []int
	for range idleWindows {
		before, ok := VoluntarySwitches(t)
		if !ok {
			t.Skip("no /proc/self/task")
		}
		time.Sleep(time.Second)
		after, _ := VoluntarySwitches(t)
		n := after - before
		if n <= most {
			t.Logf("an idle server's threads woke %d times in 1 s (windows before: %v)", n, seen)
			return
		}
		seen = append(seen, n)
	}
	t.Errorf("an idle server's threads woke %v times in %d windows of 1 s; want at most %d in one", seen, idleWindows, most)
}

// idleWindows is how many seconds CheckIdle watches at most.
const idleWindows = 3
