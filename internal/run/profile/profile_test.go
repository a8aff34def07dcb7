package profile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/testutil"
)

// TestSessionSamplesThisProcess: perf, turned on and off around a
// stretch of this process's work, yields stacks of the runner's context
// (this process is the runner here), whose counts the profile sums; its
// data file is gone after.
func TestSessionSamplesThisProcess(t *testing.T) {
	testutil.RequireRoot(t)
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("no perf: install linux-perf")
	}
	if machine, err := Check(); err != nil {
		t.Fatalf("check (the machine's: %v): %v", machine, err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "stacks", "cell.perf.data")
	s, err := Start(data, 999)
	if err != nil {
		t.Fatal(err)
	}
	// Work for 300 ms of this process's CPU: some 300 samples at 999 Hz.
	x, from := 0, cpuTime(t)
	for i := 0; cpuTime(t)-from < 300*time.Millisecond; i++ {
		for j := range 1 << 20 {
			x += i * j
		}
	}
	t.Log(x)
	if err := s.Disable(); err != nil {
		t.Fatal(err)
	}
	p, err := s.Finish(dir, record.StacksFile(3), NewContexts("/usr/bin/cnperf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *p)
	stacks, err := record.ReadStacks(filepath.Join(dir, p.File))
	if err != nil {
		t.Fatal(err)
	}
	var total uint64
	for _, n := range stacks {
		total += n
	}
	if p.Hz != 999 || p.Seconds <= 0 || p.Samples == 0 || total != p.Samples || p.ByContext[record.StackRunner] == 0 {
		t.Errorf("profile %+v with %d samples in its file: want this process's samples", *p, total)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("perf's data file: %v, want it removed", err)
	}
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCheckNamesWhatToInstall: without perf the check is bad input (not
// the machine's failure) naming the package.
func TestCheckNamesWhatToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	machine, err := Check()
	if machine || err == nil || !strings.Contains(err.Error(), "apt-get install linux-perf") {
		t.Errorf("Check without perf: machine %v, %v", machine, err)
	}
	if _, err := Start(filepath.Join(t.TempDir(), "x.data"), 99); err == nil {
		t.Error("Start without perf: no error")
	}
}
