package run_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestProfiledCellsKeepStacks: a short rr test on bare and bridge with
// profile on stores every cell's stacks, which record reads back, hold
// the samples the cell's profile counts, and have the cell's server and
// client among their contexts; perf's data files are gone (runtest.Run
// checks the labs are too).
func TestProfiledCellsKeepStacks(t *testing.T) {
	testutil.RequireRoot(t)
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("no perf: install linux-perf")
	}
	res, _ := runtest.Run(t, drivers.Catalog(), "profiled", `name: profiled
driver: netns
modes: [bare, bridge]
reference: bare
conditions: {profile: "on", profile_hz: 499}
tests:
  - workload: rr
    duration: 1s
`)
	if len(res.Meta.Cells) == 0 {
		t.Fatal("no cells")
	}
	for _, c := range res.Meta.Cells {
		p := c.Profile
		if p == nil {
			t.Errorf("cell %d (%s): no profile", c.Index, c.Mode)
			continue
		}
		t.Logf("cell %d %s: %d samples in %.2f s at %d Hz on %d CPUs, %d stacks; by context %v", c.Index, c.Mode, p.Samples, p.Seconds, p.Hz, p.CPUs, p.Stacks, p.ByContext)
		if p.File != record.StacksFile(c.Index) || p.Hz != 499 || p.Seconds <= 0 {
			t.Errorf("cell %d: profile %+v", c.Index, p)
		}
		stacks, err := record.ReadStacks(filepath.Join(res.Dir, p.File))
		if err != nil {
			t.Fatal(err)
		}
		var total uint64
		seen := map[string]bool{}
		for s, n := range stacks {
			total += n
			seen[record.Context(s)] = true
		}
		if total != p.Samples || len(stacks) != p.Stacks {
			t.Errorf("cell %d: %d samples in %d stacks, the profile says %d in %d", c.Index, total, len(stacks), p.Samples, p.Stacks)
		}
		for _, want := range []string{record.StackServer, record.StackClient} {
			if !seen[want] || p.ByContext[want] == 0 {
				t.Errorf("cell %d (%s): no %s stacks (contexts %v)", c.Index, c.Mode, want, p.ByContext)
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(res.Dir, "stacks", "*"))
	for _, f := range left {
		if !strings.HasSuffix(f, ".folded.gz") {
			t.Errorf("%s left in the run", f)
		}
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "stacks")); err != nil {
		t.Error(err)
	}
}
