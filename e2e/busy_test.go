package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/testutil"
)

// busySpec is a short socket-workload run on two modes: six cells of about a
// second, enough ticks to judge the machine's load.
const busySpec = `name: busy
description: stream on bare and bridge beside a CPU hog
driver: netns
modes: [bare, bridge]
reference: bare
tests:
  - workload: stream
    duration: 1s
    repetitions: 3
`

// TestCPUHogBesideARunIsSaid runs socket workloads while two processes spin on
// the machine's cores: the run must store the outside work per cell, its
// summary must warn, and check must answer "cannot tell" (exit 3) with the
// reason, however the limit compares.
func TestCPUHogBesideARunIsSaid(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	dir := t.TempDir()
	specPath := filepath.Join(dir, "busy.yaml")
	if err := os.WriteFile(specPath, []byte(busySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	// The hog: one spinning shell per core, ended by PID.
	for range 2 {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = hog.Process.Kill()
			_ = hog.Wait()
		})
	}
	run := filepath.Join(dir, "run")
	cmd := exec.Command(bin, "run", specPath, "-o", run)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	assertNothingLeft(t, bin)

	m := readMeta(t, run)
	for _, c := range m.Cells {
		if c.Load == nil || c.Load.OutsidePercent == nil || c.Load.RunSeconds == nil || !(*c.Load.RunSeconds > 0) {
			t.Fatalf("cell %d stored no load with the run's own CPU: %+v", c.Index, c.Load)
		}
	}
	d := m.Disturbance()
	if !d.Disturbed || d.Outside <= record.OutsideLimit {
		t.Errorf("a run beside a hog on every core is not disturbed: %+v", d)
	}
	if !strings.Contains(stdout.String(), "warning: the machine was busy during this run: work outside the run took") {
		t.Errorf("the summary does not warn:\n%s", stdout.String())
	}
	// Whatever the limit, a disturbed run cannot tell.
	for _, limit := range []string{"bridge:throughput=99", "bridge:throughput=-50"} {
		out, err := exec.Command(bin, "check", run, "--max-cost", limit).Output()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 3 {
			t.Errorf("check %s: %v, want exit 3\n%s", limit, err, out)
		}
		if !strings.HasPrefix(string(out), "cannot tell") || !strings.Contains(string(out), "was measured on a busy machine: work outside the run took") {
			t.Errorf("check %s does not say why it cannot tell:\n%s", limit, out)
		}
	}
}
