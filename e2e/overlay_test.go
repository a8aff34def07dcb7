package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cnperf/cnperf/internal/testutil"
)

// TestRouterDiesMidRun kills the pong host's overlay router: the user-space
// overlay's later cells fail with the reason, the other mode's go on, and
// the run completes and leaves nothing behind.
func TestRouterDiesMidRun(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	dir := filepath.Join(t.TempDir(), "run")
	spec := writeSpec(t, "name: router-dies\nmodes: [bare, overlay-userspace]\n"+
		"pingpong: {max_size: 20000, coverage: 0.05, repetitions: 2, chunk: 10, timeout: 1s, retries: 0}\n")
	cmd := exec.Command(bin, "run", spec, "-o", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitSamples(t, dir, 300)
	// The pong host's router: `cnperf serve overlay` listening on its
	// underlay address (the third host, 198.18.0.3).
	killed := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte("serve\x00overlay\x00")) && bytes.Contains(b, []byte(`"listen":"198.18.0.3:8285"`)) {
			pid, _ := strconv.Atoi(strings.Split(p, "/")[2])
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	if killed != 1 {
		_ = cmd.Process.Kill()
		t.Fatalf("killed %d routers, want 1", killed)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	assertNothingLeft(t, bin)
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr.String())
	}
	m := readMeta(t, dir)
	if m.Status != "complete" {
		t.Fatalf("status %q", m.Status)
	}
	var failedOverlay, goodBare int
	for _, c := range m.Cells {
		switch {
		case c.Mode == "overlay-userspace" && strings.Contains(c.Error, "router-pong exited"):
			failedOverlay++
		case c.Mode == "bare" && c.Error == "" && c.Failed == 0:
			goodBare++
		}
	}
	if failedOverlay == 0 || goodBare != len(m.Cells)/2 {
		t.Errorf("%d overlay cells failed with the router's death, %d of %d bare cells good", failedOverlay, goodBare, len(m.Cells)/2)
	}
}
