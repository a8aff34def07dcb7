package owner

import (
	"os"
	"os/exec"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		stat string
		want uint64
		ok   bool
	}{
		{"1 (init) S 0 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 7 1000 100", 7, true},
		{"42 (a) b) (c) R 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 123456 0 0", 123456, true},
		{"42 (x) R 1 2", 0, false},
		{"garbage", 0, false},
	} {
		got, err := parseStat(tc.stat)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseStat(%q) = %d, %v; want %d, ok %v", tc.stat, got, err, tc.want, tc.ok)
		}
	}
}

func TestStringParse(t *testing.T) {
	for _, id := range []ID{None, {PID: 1, Start: 0}, {PID: 4242, Start: 987654321}} {
		got, err := Parse(id.String())
		if err != nil || got != id {
			t.Errorf("Parse(%q) = %v, %v; want %v", id.String(), got, err, id)
		}
	}
	for _, bad := range []string{"", "12", "x.1", "0.5", "-1.5", "5.x", "5.-1"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

func TestGone(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if self.Gone() {
		t.Fatal("this process is gone to itself")
	}
	if None.Gone() {
		t.Fatal("nobody is gone: lab-up labs would be cleaned")
	}
	// Another start time under the same PID: a recycled PID.
	if (ID{PID: self.PID, Start: self.Start + 1}).Gone() == false {
		t.Fatal("a recycled PID is taken for the owner")
	}
	// A child that has exited and been reaped.
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	child, err := Of(cmd.Process.Pid)
	_ = cmd.Wait()
	if err == nil && !child.Gone() {
		t.Fatalf("exited child %v not gone", child)
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
}
