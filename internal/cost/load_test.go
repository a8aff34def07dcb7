package cost

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestParseMachineCPU(t *testing.T) {
	cases := []struct {
		name, text string
		want       MachineCPU
		wantErr    bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"all columns", "cpu  100 20 30 800 10 5 15 7 50 3\ncpu0 1 2 3 4 5 6 7 8 9 10\n", MachineCPU{Busy: 150, Steal: 7, Total: 987}, false},
		{"no steal column (old kernel)", "cpu 100 0 50 850 0 0 0\n", MachineCPU{Busy: 150, Total: 1000}, false},
		{"cpu line after others", "intr 5\ncpu0 1 1 1 1\ncpu 1 2 3 4\n", MachineCPU{Busy: 6, Total: 10}, false},
		{"no cpu line", "cpu0 1 2 3 4\nintr 5\n", MachineCPU{}, true},
		{"too short", "cpu 1 2 3\n", MachineCPU{}, true},
		{"not a number", "cpu 1 2 x 4\n", MachineCPU{}, true},
	}
	for _, c := range cases {
		got, err := parseMachineCPU(c.text)
		if (err != nil) != c.wantErr || (!c.wantErr && got != c.want) {
			t.Errorf("%s: got %+v, %v; want %+v, err %v", c.name, got, err, c.want, c.wantErr)
		}
	}
}

func TestParseProcTimes(t *testing.T) {
	cases := []struct {
		line    string
		want    procTimes
		wantErr bool
	}{
		// utime 250, stime 75, cutime 30, cstime 5.
		{"1234 (cnperf) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 30 5 20 0 8 0 100 0 0", procTimes{1234, 1, 360}, false},
		{"99 (a (b) c) R 42 1 1 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0 1 0 0", procTimes{99, 42, 30}, false},
		{"no parens here", procTimes{}, true},
		{"7 (x) S 1 1 1 0 -1 0 0 0 0 0 10 20 0", procTimes{}, true},
		{"x (y) S 1 1 1 0 -1 0 0 0 0 0 10 20 0 0 20 0", procTimes{}, true},
	}
	for _, c := range cases {
		got, err := parseProcTimes(c.line)
		if (err != nil) != c.wantErr || (!c.wantErr && got != c.want) {
			t.Errorf("parseProcTimes(%q) = %+v, %v; want %+v, err %v", c.line, got, err, c.want, c.wantErr)
		}
	}
}

func TestTreeTicks(t *testing.T) {
	procs := []procTimes{
		{1, 0, 1000},   // init: not the run's
		{100, 1, 50},   // the run
		{101, 100, 20}, // its server
		{102, 101, 5},  // the server's child
		{103, 100, 7},  // an engine's container: counted by its cgroup
		{200, 1, 900},  // a hog beside the run
	}
	skip := func(pid int) bool { return pid == 103 }
	if got := treeTicks(procs, 100, skip); got != 75 {
		t.Errorf("run's ticks = %d, want 75", got)
	}
	if got := treeTicks(procs, 999, skip); got != 0 {
		t.Errorf("a missing root has %d ticks", got)
	}
}

// TestLoad judges cells from /proc/stat snapshots one second apart on a
// 2-core machine (200 ticks).
func TestLoad(t *testing.T) {
	snap := func(stat string, run float64) Snapshot {
		m, err := parseMachineCPU(stat)
		if err != nil {
			t.Fatal(err)
		}
		return Snapshot{Machine: m, Run: run}
	}
	start := snap("cpu 1000 0 500 8000 100 0 0 0 0 0\n", 10)
	cases := []struct {
		name                  string
		end                   Snapshot
		own                   bool
		outside, steal, cpu   float64
		outsidePct, stealPct  float64
		nilLoad, outsideKnown bool
	}{
		// The run used 1 s of CPU and processes 1 s: nothing outside.
		{"quiet", snap("cpu 1060 0 540 8100 100 0 0 0 0 0\n", 11), true, 0, 0, 2, 0, 0, false, true},
		// A hog spun one core (100 user ticks) beside a run of 0.8 s.
		{"hog", snap("cpu 1140 0 540 8020 100 0 0 0 0 0\n", 10.8), true, 1, 0, 2, 50, 0, false, true},
		// Softirq ticks (the lab's packets) are no one's outside work.
		{"softirq", snap("cpu 1040 0 520 8060 100 0 80 0 0 0\n", 10.6), true, 0, 0, 2, 0, 0, false, true},
		// The hypervisor took 20 ticks.
		{"steal", snap("cpu 1040 0 520 8120 100 0 0 20 0 0\n", 10.6), true, 0, 0.2, 2, 0, 10, false, true},
		// The run's own count past the machine's (rounding): 0, not less.
		{"run above busy", snap("cpu 1050 0 520 8130 100 0 0 0 0 0\n", 11.5), true, 0, 0, 2, 0, 0, false, true},
		// Pods on a cluster: outside work unknown, steal still known.
		{"not own", snap("cpu 1140 0 540 8000 100 0 0 20 0 0\n", 10.8), false, 0, 0.2, 2, 0, 10, false, false},
		// No tick passed.
		{"no time", start, true, 0, 0, 0, 0, 0, true, false},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, c := range cases {
		l := Load(start, c.end, c.own)
		if c.nilLoad {
			if l != nil {
				t.Errorf("%s: load %+v, want none", c.name, l)
			}
			continue
		}
		if l == nil {
			t.Fatalf("%s: no load", c.name)
		}
		if (l.OutsideSeconds != nil) != c.outsideKnown {
			t.Errorf("%s: outside known %v, want %v", c.name, l.OutsideSeconds != nil, c.outsideKnown)
		}
		if c.outsideKnown && (!near(*l.OutsideSeconds, c.outside) || !near(*l.OutsidePercent, c.outsidePct)) {
			t.Errorf("%s: outside %v s (%v %%), want %v s (%v %%)", c.name, *l.OutsideSeconds, *l.OutsidePercent, c.outside, c.outsidePct)
		}
		if !near(l.StealSeconds, c.steal) || !near(l.StealPercent, c.stealPct) || !near(l.CPUSeconds, c.cpu) {
			t.Errorf("%s: steal %v s (%v %%) of %v s, want %v s (%v %%) of %v s", c.name, l.StealSeconds, l.StealPercent, l.CPUSeconds, c.steal, c.stealPct, c.cpu)
		}
	}
}

// TestMeterRead reads a made-up /proc and cpuacct hierarchy: the run's
// tree, an engine container's cgroup, and a process outside.
func TestMeterRead(t *testing.T) {
	dir := t.TempDir()
	proc, cg := filepath.Join(dir, "proc"), filepath.Join(dir, "cpuacct")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proc, "stat"), "cpu 1000 0 500 8000 100 0 0 3 0 0\n")
	stat := func(pid, ppid, utime string) string {
		return pid + " (p) S " + ppid + " 1 1 0 -1 0 0 0 0 0 " + utime + " 0 0 0 20 0 1 0 1 0 0\n"
	}
	write(filepath.Join(proc, "100", "stat"), stat("100", "1", "200"))   // the run: 2 s
	write(filepath.Join(proc, "101", "stat"), stat("101", "100", "50"))  // its server: 0.5 s
	write(filepath.Join(proc, "102", "stat"), stat("102", "100", "900")) // in an engine's cgroup
	write(filepath.Join(proc, "102", "cgroup"), "4:cpu,cpuacct:/cnperf/lab1/docker-h1/abc\n")
	write(filepath.Join(proc, "300", "stat"), stat("300", "1", "5000"))                      // outside
	write(filepath.Join(proc, "self", "stat"), "not a pid directory")                        // skipped
	write(filepath.Join(cg, "cnperf", "lab1", "docker-h1", "cpuacct.usage"), "1500000000\n") // 1.5 s
	write(filepath.Join(cg, "cnperf", "other", "docker-h1", "cpuacct.usage"), "9000000000\n")
	m := &Meter{Self: 100, Labs: []string{"lab1"}, Proc: proc, Cgroup: cg}
	s, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if want := (MachineCPU{Busy: 1500, Steal: 3, Total: 9603}); s.Machine != want {
		t.Errorf("machine %+v, want %+v", s.Machine, want)
	}
	if math.Abs(s.Run-4) > 1e-9 {
		t.Errorf("run CPU %v s, want 4 (2 + 0.5 + 1.5 from the cgroup, not the container's process again)", s.Run)
	}
	if _, err := (&Meter{Self: 1, Proc: filepath.Join(dir, "none")}).Read(); err == nil {
		t.Error("a missing /proc/stat must be an error")
	}
}

// BenchmarkMeterRead is what a cell's two snapshots cost on this machine.
func BenchmarkMeterRead(b *testing.B) {
	m := NewMeter(nil)
	for b.Loop() {
		if _, err := m.Read(); err != nil {
			b.Fatal(err)
		}
	}
}
