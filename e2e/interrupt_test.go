package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cnperf/cnperf/internal/testutil"
)

// TestProcessGroupSIGINTRecordsInterrupted interrupts a run as a terminal's
// Ctrl-C does: SIGINT to cnperf's whole process group, which its servers
// would be in, and which then could die of it before cnperf stops them.
// Every trial must exit 130 with run.json saying "interrupted" and leave
// nothing behind; the race it guards against lost 1 trial in 4 to 6.
func TestProcessGroupSIGINTRecordsInterrupted(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	spec := longSpec(t)
	for trial := range 6 {
		dir := filepath.Join(t.TempDir(), "run")
		cmd := exec.Command(bin, "run", spec, "-o", dir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		// A group of its own, as a shell gives a foreground job: the
		// signal to the group is the terminal's.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitSamples(t, dir, 50)
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
			t.Fatalf("trial %d: exit = %v, want 130\nstderr:\n%s", trial, err, stderr.String())
		}
		if m := readMeta(t, dir); m.Status != "interrupted" {
			t.Fatalf("trial %d: run.json says %q (%s), want interrupted", trial, m.Status, m.Error)
		}
	}
	assertNothingLeft(t, bin)
}
