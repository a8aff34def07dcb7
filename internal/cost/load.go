package cost

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/record"
)

// A busy machine moves every ratio: a mode that costs more CPU per packet
// loses more when CPU is scarce, and interleaving does not undo that. So
// each cell records how much of the machine's CPU went to processes outside
// the run, and how much the hypervisor took (steal), from two snapshots:
// one as the cell starts, one as it ends.
//
// Outside work is the machine's process time (user, nice and system of
// /proc/stat's "cpu" line) less the run's own: cnperf's process and every
// descendant (servers, clients, overlay routers, Docker engines; the time
// of descendants already reaped is in their parents' cutime and cstime),
// and the cgroups of its Docker engines' containers, whose processes the
// engines' shims hold outside cnperf's tree. Interrupt and softirq time is
// left out of both sides: the kernel spends it on the lab's packets, and no
// process is charged with it. Steal is /proc/stat's steal column.

// MachineCPU is the "cpu" line of /proc/stat, in ticks (USER_HZ).
type MachineCPU struct {
	Busy  uint64 // user + nice + system: time processes used
	Steal uint64 // taken by the hypervisor while this VM wanted to run
	Total uint64 // every column but guest and guest_nice (already in user and nice)
}

// parseMachineCPU reads the "cpu" line of /proc/stat. Kernels before 2.6.11
// have no steal column; it then stays 0.
func parseMachineCPU(text string) (MachineCPU, error) {
	var m MachineCPU
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 5 {
			return m, fmt.Errorf("/proc/stat: cpu line has %d columns, want at least 4", len(f)-1)
		}
		c, err := parseCPUColumns(f)
		if err != nil {
			return m, err
		}
		return MachineCPU{Busy: c[cpuUser] + c[cpuNice] + c[cpuSystem], Steal: c[cpuSteal], Total: c.total()}, nil
	}
	return m, fmt.Errorf("/proc/stat has no cpu line")
}

// Snapshot is what a cell's load is computed from, read at one moment.
type Snapshot struct {
	Machine MachineCPU
	Run     float64 // CPU seconds the run's processes have used so far
	// Kernel is the per-core counters (Kernel's input); nil where
	// /proc/softirqs cannot be read.
	Kernel *KernelSnapshot
}

// procTimes is one process's line of /proc/PID/stat: its parent and its
// CPU with that of its reaped children, in ticks.
type procTimes struct {
	pid, ppid int
	ticks     uint64 // utime + stime + cutime + cstime
}

// parseProcTimes reads pid, ppid and the four CPU times from a
// /proc/PID/stat line. The command name may hold spaces and parentheses,
// so fields are counted from the last ')'.
func parseProcTimes(line string) (procTimes, error) {
	var p procTimes
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 1 || end < open {
		return p, fmt.Errorf("no command name in %q", line)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil {
		return p, fmt.Errorf("pid %q: not a number", line[:open])
	}
	f := strings.Fields(line[end+1:])
	// After ")": state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	if len(f) < 15 {
		return p, fmt.Errorf("%d fields after the command name, want >= 15", len(f))
	}
	p.pid = pid
	if p.ppid, err = strconv.Atoi(f[1]); err != nil {
		return p, fmt.Errorf("ppid %q: not a number", f[1])
	}
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return p, fmt.Errorf("CPU time %q: not a number", v)
		}
		if n > 0 {
			p.ticks += uint64(n)
		}
	}
	return p, nil
}

// treeTicks sums the ticks of root and all its descendants, leaving out
// those skip names (their CPU is counted elsewhere).
func treeTicks(procs []procTimes, root int, skip func(pid int) bool) uint64 {
	children := map[int][]int{}
	ticks := map[int]uint64{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
		ticks[p.pid] = p.ticks
	}
	var sum uint64
	queue := []int{root}
	seen := map[int]bool{}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if pid == root || !skip(pid) {
			sum += ticks[pid]
		}
		queue = append(queue, children[pid]...)
	}
	return sum
}

// Meter takes a run's snapshots.
type Meter struct {
	Self int      // the run's process: it and its descendants are the run's
	Labs []string // the run's labs: their Docker engines' container cgroups are the run's
	// Proc and Cgroup are /proc and the cpuacct hierarchy; tests point them elsewhere.
	Proc, Cgroup string
}

// NewMeter is a meter for this process's run of labs.
func NewMeter(labs []string) *Meter {
	return &Meter{Self: os.Getpid(), Labs: labs, Proc: "/proc", Cgroup: "/sys/fs/cgroup/cpuacct"}
}

// engineCgroups are the cgroups (relative to the cpuacct hierarchy) of the
// labs' Docker engines' containers: /cnperf/LAB/docker-HOST.
func (m *Meter) engineCgroups() []string {
	var out []string
	for _, l := range m.Labs {
		dirs, _ := filepath.Glob(filepath.Join(m.Cgroup, "cnperf", l, "docker-*"))
		for _, d := range dirs {
			out = append(out, strings.TrimPrefix(d, m.Cgroup))
		}
	}
	return out
}

// Read takes a snapshot.
func (m *Meter) Read() (Snapshot, error) {
	var s Snapshot
	b, err := os.ReadFile(filepath.Join(m.Proc, "stat"))
	if err != nil {
		return s, fmt.Errorf("read /proc/stat: %w", err)
	}
	if s.Machine, err = parseMachineCPU(string(b)); err != nil {
		return s, err
	}
	if irqs, err := os.ReadFile(filepath.Join(m.Proc, "softirqs")); err == nil {
		s.Kernel, _ = ParseKernel(string(b), string(irqs))
	}
	entries, err := os.ReadDir(m.Proc)
	if err != nil {
		return s, fmt.Errorf("read /proc: %w", err)
	}
	var procs []procTimes
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(m.Proc, e.Name(), "stat"))
		if err != nil {
			continue // it ended meanwhile
		}
		if p, err := parseProcTimes(string(b)); err == nil {
			procs = append(procs, p)
		}
	}
	cgroups := m.engineCgroups()
	inEngine := func(pid int) bool {
		if len(cgroups) == 0 {
			return false
		}
		cg := cpuacctCgroup(filepath.Join(m.Proc, strconv.Itoa(pid), "cgroup"))
		for _, c := range cgroups {
			if cg == c || strings.HasPrefix(cg, c+"/") {
				return true
			}
		}
		return false
	}
	s.Run = float64(treeTicks(procs, m.Self, inEngine)) / clockTicks
	for _, c := range cgroups {
		b, err := os.ReadFile(filepath.Join(m.Cgroup, c, "cpuacct.usage"))
		if err != nil {
			continue
		}
		if ns, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			s.Run += float64(ns) / 1e9
		}
	}
	return s, nil
}

// cpuacctCgroup is a process's cpuacct cgroup (cgroup v1) from its
// /proc/PID/cgroup, or "".
func cpuacctCgroup(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "cpuacct" {
				return parts[2]
			}
		}
	}
	return ""
}

// Load is the cell's load between snapshots a and b. With own false the
// run has processes outside what a Meter finds (pods of a cluster,
// containers of an existing engine): outside work is then left unknown.
func Load(a, b Snapshot, own bool) *record.CellLoad {
	if b.Machine.Total <= a.Machine.Total {
		return nil // no tick passed: nothing to say
	}
	diff := func(x, y uint64) float64 { return float64(since(x, y)) / clockTicks }
	l := &record.CellLoad{
		CPUSeconds:   diff(a.Machine.Total, b.Machine.Total),
		BusySeconds:  diff(a.Machine.Busy, b.Machine.Busy),
		StealSeconds: diff(a.Machine.Steal, b.Machine.Steal),
	}
	l.StealPercent = 100 * l.StealSeconds / l.CPUSeconds
	if own {
		run := max(0, b.Run-a.Run)
		out := max(0, l.BusySeconds-run)
		pct := 100 * out / l.CPUSeconds
		l.RunSeconds, l.OutsideSeconds, l.OutsidePercent = &run, &out, &pct
	}
	return l
}
