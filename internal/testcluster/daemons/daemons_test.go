package daemons

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/owner"
)

// TestRecordReplacesRole: a daemon started again replaces its role's
// line in the pid file and leaves the others', so status and down see
// the process that runs.
func TestRecordReplacesRole(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []Recorded{{owner.ID{PID: 10, Start: 1}, "etcd"}, {owner.ID{PID: 11, Start: 2}, "node1-flanneld"}, {owner.ID{PID: 12, Start: 3}, "node1-kubelet"}, {owner.ID{PID: 13, Start: 4}, "node1-flanneld"}} {
		if err := record(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Recorded{{owner.ID{PID: 10, Start: 1}, "etcd"}, {owner.ID{PID: 12, Start: 3}, "node1-kubelet"}, {owner.ID{PID: 13, Start: 4}, "node1-flanneld"}}
	if len(got) != len(want) {
		t.Fatalf("pid file holds %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pids.new")); err == nil {
		t.Error("pids.new left behind")
	}
	if _, err := Stop(dir, "node2-flanneld"); err == nil || err.Error() != "the cluster runs no node2-flanneld" {
		t.Errorf("Stop of a role not recorded: %v", err)
	}
	if _, err := StartAgain(dir, "node1-kubelet"); err == nil {
		t.Error("StartAgain without a launch record: no error")
	}
}
