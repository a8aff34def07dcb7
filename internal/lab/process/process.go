// Package process starts cnperf's server processes inside lab namespaces:
// either as a plain process in a host's namespace, or as a container with its
// own cgroup (cgroup v1: cpu, cpuacct, memory, pids) and its own pid, uts, ipc
// and mount namespaces, so its CPU and memory can be accounted. Cgroups live
// under /sys/fs/cgroup/<controller>/cnperf/<lab>/<name> and are found again
// by that path.
package process

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/cost"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/record"
)

// CgroupRoot is where cgroup v1 controllers are mounted.
const CgroupRoot = "/sys/fs/cgroup"

// controllers are the cgroup v1 controllers a container joins (those present).
var controllers = []string{"cpu", "cpuacct", "memory", "pids"}

// StartGateEnv names the descriptor a container's process reads one byte
// from before it starts work (see AwaitStart).
const StartGateEnv = "CNPERF_START_FD"

// AwaitStart blocks until the parent has put this process into its cgroups,
// when it was started as a container; it returns at once otherwise. cnperf's
// main calls it first.
func AwaitStart() {
	v := os.Getenv(StartGateEnv)
	if v == "" {
		return
	}
	fd, err := strconv.Atoi(v)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "start-gate")
	var b [1]byte
	_, _ = f.Read(b[:]) // EOF (the parent died) also ends the wait
	f.Close()
	os.Unsetenv(StartGateEnv)
}

// Spec says what to start and where.
type Spec struct {
	Lab       string   // lab the process belongs to (cgroup path)
	Name      string   // e.g. "ping" (cgroup path)
	NetNS     string   // named network namespace to run in
	Container bool     // own cgroup and pid/uts/ipc/mount namespaces
	Args      []string // Args[0] is the program
	Stdout    io.Writer
	Stderr    io.Writer
	// Env adds to the environment the process inherits.
	Env []string
	// CPUs, when set, pins the process (and every thread it makes) to
	// these CPUs, the cores condition.
	CPUs []int
	// Daemon keeps the process when cnperf ends (no parent-death signal):
	// a lab's overlay router outlives `lab up`.
	// Down and clean end it with the lab's namespaces.
	Daemon bool
}

// Process is a started process.
type Process struct {
	Spec    Spec
	cmd     *exec.Cmd
	cgroups []string
	Exit
}

// Exit is how a started process ends, for the lab's Proc (Done, Exited):
// made running with NewExit, ended once with End. The drivers' other
// processes (containers, execs) end through it too.
type Exit struct {
	done chan struct{}
	err  error
}

// NewExit is the Exit of a process that runs.
func NewExit() Exit { return Exit{done: make(chan struct{})} }

// End records that the process has ended, and how (nil: exit status 0).
func (e *Exit) End(err error) { e.err = err; close(e.done) }

// Done is closed when the process has ended.
func (e *Exit) Done() <-chan struct{} { return e.done }

// Exited reports whether the process has ended, and how.
func (e *Exit) Exited() (bool, error) {
	select {
	case <-e.done:
		return true, e.err
	default:
		return false, nil
	}
}

// PID returns the process's PID in the root pid namespace.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Start launches the process inside its namespace.
func Start(s Spec) (*Process, error) {
	if len(s.Args) == 0 {
		return nil, errors.New("container: no command")
	}
	cmd := exec.Command(s.Args[0], s.Args[1:]...)
	cmd.Stdout, cmd.Stderr = s.Stdout, s.Stderr
	if len(s.Env) > 0 {
		cmd.Env = append(os.Environ(), s.Env...)
	}
	// A process group of its own: a terminal's Ctrl-C (SIGINT to the
	// foreground group) reaches cnperf alone, which stops its servers
	// itself and records the run as interrupted; a server that died of
	// the same signal would record it as failed. The parent-death signal
	// still ends it with cnperf.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if s.Daemon {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if s.Container {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNS
	}
	p := &Process{Spec: s, cmd: cmd, Exit: NewExit()}
	var gate *os.File // write end of the start gate
	if s.Container {
		cgs, err := makeCgroups(s.Lab, s.Name)
		if err != nil {
			return nil, err
		}
		p.cgroups = cgs
		// The child waits on a pipe until it is in its cgroups: memory is
		// charged to the cgroup of the task that allocates it, so a server
		// that built its buffers before the move would be undercounted.
		r, w, err := os.Pipe()
		if err != nil {
			removeCgroups(cgs)
			return nil, fmt.Errorf("start gate: %w", err)
		}
		defer r.Close()
		gate = w
		cmd.ExtraFiles = []*os.File{r}
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, StartGateEnv+"=3")
	}
	// The child inherits the network namespace of the thread that forks it.
	// Pdeathsig is tied to that thread too, but Do's thread lives as long as
	// the process that owns it, which is enough: Stop ends the child first.
	if err := namespace.Do(s.NetNS, func() error { return startPinned(cmd, s.CPUs) }); err != nil {
		if gate != nil {
			gate.Close()
		}
		removeCgroups(p.cgroups)
		return nil, fmt.Errorf("start %s in %s: %w", s.Name, s.NetNS, err)
	}
	// Join the cgroups right after the fork; the server has not served
	// anything yet, so nothing it costs goes unaccounted.
	for _, cg := range p.cgroups {
		// Charges of pages the runtime touched before the move follow the task.
		_ = os.WriteFile(filepath.Join(cg, "memory.move_charge_at_immigrate"), []byte("3"), 0o644)
		if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(p.PID())), 0o644); err != nil {
			gate.Close()
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
			removeCgroups(p.cgroups)
			return nil, fmt.Errorf("move %s into %s: %w", s.Name, cg, err)
		}
	}
	if gate != nil {
		_, _ = gate.Write([]byte{1}) // go
		gate.Close()
	}
	go func() { p.End(cmd.Wait()) }()
	return p, nil
}

// Watch is a process its caller started by exec, in no cgroup of its own
// (a lab's dockerd and containerd, a test's runtime): waited on, stopped
// and read as Start's are.
func Watch(cmd *exec.Cmd) *Process {
	p := &Process{cmd: cmd, Exit: NewExit()}
	go func() { p.End(cmd.Wait()) }()
	return p
}

// Stop ends the process by PID (SIGTERM, then SIGKILL after grace) and
// removes its cgroups. Stopping twice is harmless.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	removeCgroups(p.cgroups)
	p.cgroups = nil
	return nil
}

// Usage is record.Usage: stored with the run.
type Usage = record.Usage

// Usage reads the process's counters; call it before Stop. A plain process
// that has ended is read from its rusage, as /proc has forgotten it.
func (p *Process) Usage() (Usage, error) {
	var u Usage
	if done, _ := p.Exited(); done && !p.Spec.Container {
		ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			return u, errors.New("no rusage")
		}
		user := time.Duration(ru.Utime.Nano()).Seconds()
		sys := time.Duration(ru.Stime.Nano()).Seconds()
		return Usage{Source: "rusage", CPUSeconds: user + sys, UserSeconds: user, SystemSeconds: sys,
			MemoryPeak: ru.Maxrss * 1024}, nil // Maxrss is in KiB
	}
	if !p.Spec.Container {
		pu, err := cost.ProcUsage(p.PID())
		if err != nil {
			return u, err
		}
		return Usage{Source: "proc", CPUSeconds: pu.UserSeconds + pu.SystemSeconds, UserSeconds: pu.UserSeconds,
			SystemSeconds: pu.SystemSeconds, MemoryPeak: pu.PeakRSS, MemoryCurrent: pu.RSS}, nil
	}
	return CgroupUsage(filepath.Join("cnperf", p.Spec.Lab, p.Spec.Name)), nil
}

// CgroupUsage reads the counters of the cgroup at rel under each controller
// (a container of either driver); counters that cannot be read stay 0.
func CgroupUsage(rel string) Usage {
	u := Usage{Source: "cgroup"}
	cg := func(ctrl, file string) string {
		return filepath.Join(CgroupRoot, ctrl, rel, file)
	}
	if v, err := readInt(cg("cpuacct", "cpuacct.usage")); err == nil {
		u.CPUSeconds = float64(v) / 1e9
	}
	if b, err := os.ReadFile(cg("cpuacct", "cpuacct.stat")); err == nil {
		hz := 100.0 // USER_HZ on Linux
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 {
				v, _ := strconv.ParseFloat(f[1], 64)
				switch f[0] {
				case "user":
					u.UserSeconds = v / hz
				case "system":
					u.SystemSeconds = v / hz
				}
			}
		}
	}
	if v, err := readInt(cg("memory", "memory.max_usage_in_bytes")); err == nil {
		u.MemoryPeak = v
	}
	if v, err := readInt(cg("memory", "memory.usage_in_bytes")); err == nil {
		u.MemoryCurrent = v
	}
	return u
}

// ResetMemoryPeak restarts the memory peak of the cgroup at rel from its
// current usage, so that a peak read later covers what came after.
func ResetMemoryPeak(rel string) error {
	return os.WriteFile(filepath.Join(CgroupRoot, "memory", rel, "memory.max_usage_in_bytes"), []byte("0"), 0o644)
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

func makeCgroups(lab, name string) ([]string, error) {
	var made []string
	for _, c := range controllers {
		base := filepath.Join(CgroupRoot, c)
		if _, err := os.Stat(base); err != nil {
			continue // controller not mounted here
		}
		dir := filepath.Join(base, "cnperf", lab, name)
		// Another lab's teardown removes the shared "cnperf" parent once it
		// is empty; that can happen between MkdirAll's steps, so try again.
		err := os.MkdirAll(dir, 0o755)
		for try := 0; try < 5 && errors.Is(err, os.ErrNotExist); try++ {
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			removeCgroups(made)
			return nil, fmt.Errorf("create cgroup %s: %w", dir, err)
		}
		made = append(made, dir)
	}
	return made, nil
}

// removeCgroups removes a container's cgroups and their emptied parents.
func removeCgroups(dirs []string) {
	for _, d := range dirs {
		_ = os.Remove(d)
		_ = os.Remove(filepath.Dir(d))               // the lab's, once empty
		_ = os.Remove(filepath.Dir(filepath.Dir(d))) // cnperf's, once empty
	}
}

// CgroupLabs lists the labs that have cgroups under cnperf's path, in any
// hierarchy.
func CgroupLabs() []string {
	seen := map[string]bool{}
	var labs []string
	entries, _ := os.ReadDir(CgroupRoot)
	for _, h := range entries {
		sub, _ := os.ReadDir(filepath.Join(CgroupRoot, h.Name(), "cnperf"))
		for _, e := range sub {
			if e.IsDir() && !seen[e.Name()] {
				seen[e.Name()] = true
				labs = append(labs, e.Name())
			}
		}
	}
	return labs
}

// CleanCgroups removes every cgroup cnperf created for lab ("" for all labs),
// killing by PID any process still inside. It returns the directories removed.
func CleanCgroups(lab string) ([]string, error) {
	var removed []string
	var errs []error
	// Every hierarchy, not just the controllers cnperf joins: Docker
	// engines put their containers under cnperf's path in all of them.
	hierarchies := controllers
	if entries, err := os.ReadDir(CgroupRoot); err == nil {
		hierarchies = nil
		for _, e := range entries {
			hierarchies = append(hierarchies, e.Name())
		}
	}
	for _, c := range hierarchies {
		root := filepath.Join(CgroupRoot, c, "cnperf")
		if lab != "" {
			root = filepath.Join(root, lab)
		}
		if _, err := os.Stat(root); err != nil {
			continue
		}
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		// Deepest first, so children go before their parents.
		for i := len(dirs) - 1; i >= 0; i-- {
			d := dirs[i]
			if b, err := os.ReadFile(filepath.Join(d, "cgroup.procs")); err == nil {
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
			var err error
			for try := 0; try < 50; try++ {
				if err = os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
					err = nil
					break
				}
				time.Sleep(20 * time.Millisecond) // killed processes take a moment to leave
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
				continue
			}
			removed = append(removed, d)
		}
	}
	// The top "cnperf" directories once their labs are gone.
	if lab != "" {
		for _, c := range hierarchies {
			_ = os.Remove(filepath.Join(CgroupRoot, c, "cnperf"))
		}
	}
	return removed, errors.Join(errs...)
}

// startPinned starts cmd from the calling (locked) thread with its CPU
// affinity set to cpus, which the child inherits, and restores the
// thread's affinity after.
func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("read CPU affinity: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPUs %v: %w", cpus, err)
	}
	defer func() { _ = unix.SchedSetaffinity(0, &old) }()
	return cmd.Start()
}

// LastLine is the last non-empty line of a daemon's output, trimmed to a
// length one error line can carry: what a failure quotes (a lab's
// daemons, a test cluster's, the engines).
func LastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if len(line) > 300 {
		line = line[:300] + "..."
	}
	return line
}

// LastLogLine is LastLine of the file at path (its last 16 kB), or a note
// saying why there is none.
func LastLogLine(path string) string {
	if path == "" {
		return "(no log kept)"
	}
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	const tail = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		_, _ = f.Seek(fi.Size()-tail, 0)
	}
	b := make([]byte, tail)
	n, _ := f.Read(b)
	if line := LastLine(b[:n]); line != "" {
		return line
	}
	return "(its log is empty)"
}
