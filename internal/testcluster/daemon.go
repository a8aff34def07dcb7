package testcluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/lab/process"
)

// daemon is a process the cluster runs for its lifetime.
type daemon struct {
	role   string   // what status calls it: etcd, node1-kubelet
	ns     string   // the lab namespace it runs in ("": the root one)
	cgroup string   // its cgroup under every v1 controller (cnperf/NAME/...)
	argv   []string // argv[0] is the program
	env    []string // added to the environment
	// node makes a mount namespace of its own for it (a node's first
	// daemon, containerd), with these tmpfs and bind mounts (SRC:DST).
	node   bool
	tmpfs  []string
	bpffs  string // a bpffs of the node's own here
	binds  []string
	mntPID int // join this process's mount namespace (a node's others)
	// cgroupns puts it in a cgroup namespace rooted at its own cgroup v2
	// (cgroup, made in the unified hierarchy too).
	cgroupns bool
}

// pidFile is where a cluster records its daemons: "PID START ROLE" lines.
func pidFile(name string) string { return filepath.Join(Dir(name), "pids") }

// start starts d detached (a session of its own, stdin /dev/null, its
// output to the cluster's logs/ROLE.log) through `cnperf cluster exec`,
// which joins d's cgroups and makes its mounts before it execs d's
// program, so that nothing d forks escapes the cgroups. It records the
// PID and start time, so that status and down never mistake a reused PID.
func (c *builder) start(d daemon) (int, error) {
	args := []string{"cluster", "exec", "--cgroup", d.cgroup}
	for _, t := range d.tmpfs {
		args = append(args, "--tmpfs", t)
	}
	for _, b := range d.binds {
		args = append(args, "--bind", b)
	}
	if d.bpffs != "" {
		args = append(args, "--bpffs", d.bpffs)
	}
	if d.cgroupns {
		args = append(args, "--cgroupns")
	}
	if d.node {
		// The machine's mount namespace, which the node's mounts must not
		// be made in.
		mnt, err := os.Readlink("/proc/self/ns/mnt")
		if err != nil {
			return 0, err
		}
		args = append(args, "--outside", mnt)
	}
	argv := d.argv
	if d.mntPID > 0 {
		argv = append([]string{"nsenter", fmt.Sprintf("--mount=/proc/%d/ns/mnt", d.mntPID), "--"}, argv...)
	}
	args = append(append(args, "--"), argv...)
	logf, err := os.OpenFile(filepath.Join(c.dir, "logs", d.role+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer logf.Close() // the child holds its own
	cmd := exec.Command(c.o.Exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), d.env...)
	cmd.Dir = "/"
	// No parent-death signal: the cluster outlives `cluster up`.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if d.node {
		// Go makes every mount private in the new namespace (MS_REC|
		// MS_PRIVATE on /) before it execs: nothing mounted there reaches
		// the machine's mount table.
		cmd.SysProcAttr.Unshareflags = syscall.CLONE_NEWNS
	}
	if d.ns != "" {
		err = namespace.Do(d.ns, cmd.Start)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", d.role, err)
	}
	pid := cmd.Process.Pid
	go func() { _ = cmd.Wait() }() // reaped while up runs; init's after
	id, err := owner.Of(pid)
	if err != nil {
		return 0, fmt.Errorf("%s exited at once (logs/%s.log)", d.role, d.role)
	}
	f, err := os.OpenFile(pidFile(c.o.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%d %d %s\n", id.PID, id.Start, d.role); err != nil {
		return 0, err
	}
	c.daemons = append(c.daemons, recorded{ID: id, Role: d.role})
	return pid, nil
}

// recorded is a daemon the pid file names.
type recorded struct {
	owner.ID
	Role string
}

// readPids reads a cluster's pid file.
func readPids(name string) ([]recorded, error) {
	f, err := os.Open(pidFile(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []recorded
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 {
			continue
		}
		id, err := owner.Parse(fs[0] + "." + fs[1])
		if err != nil {
			continue
		}
		out = append(out, recorded{ID: id, Role: fs[2]})
	}
	return out, sc.Err()
}

// Exec is `cnperf cluster exec`, run as a daemon's first process: it joins
// the cgroup rel in every cgroup v1 hierarchy (created where missing:
// the kubelet wants its cgroup root in all of them), makes its mounts
// when it has a mount namespace of its own, and execs argv in place (same
// PID).
// outside is the mount namespace the mounts must not be made in (the
// machine's, as its starter read it).
// cgroupns puts it in rel in the unified (v2) hierarchy too and in a new
// cgroup namespace rooted there.
func Exec(rel string, tmpfs, binds []string, bpffs, outside string, cgroupns bool, argv []string) error {
	if len(argv) == 0 {
		return errors.New("cluster exec: no command")
	}
	// Namespaces unshared below are the thread's, and the exec must be
	// made from it.
	runtime.LockOSThread()
	if err := joinCgroups(rel); err != nil {
		return err
	}
	if len(tmpfs)+len(binds) > 0 || bpffs != "" {
		if err := nodeMounts(tmpfs, binds, bpffs, outside); err != nil {
			return err
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	if cgroupns {
		if err := unifiedCgroupNS(rel); err != nil {
			return err
		}
	}
	return syscall.Exec(path, argv, os.Environ())
}

// joins are the hierarchies a daemon joins, those its CPU and memory are
// accounted in; joinCgroups makes rel in the others too (but the unified
// one), as the kubelet wants its cgroup root in every one.
var joins = map[string]bool{"pids": true, "memory": true, "cpu": true, "cpuacct": true}

// joinCgroups puts the calling process in rel, made where missing,
// cpuset's levels given their parent's CPUs and memory nodes.
func joinCgroups(rel string) error {
	if rel == "" || filepath.IsAbs(rel) || strings.Contains(rel, "..") {
		return fmt.Errorf("cluster exec: bad cgroup %q", rel)
	}
	entries, err := os.ReadDir(process.CgroupRoot)
	if err != nil {
		return err
	}
	self := []byte(strconv.Itoa(os.Getpid()))
	for _, e := range entries {
		root := filepath.Join(process.CgroupRoot, e.Name())
		if e.Name() == "unified" {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
			continue
		}
		p := root
		for _, part := range strings.Split(rel, "/") {
			parent := p
			p = filepath.Join(p, part)
			if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("cgroup %s: %w", p, err)
			}
			// A cpuset cgroup takes no task until it has CPUs and memory
			// nodes; a level made before (cnperf's own, by another lab)
			// may have none yet.
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				cur, err := os.ReadFile(filepath.Join(p, f))
				if err != nil || strings.TrimSpace(string(cur)) != "" {
					continue
				}
				if b, err := os.ReadFile(filepath.Join(parent, f)); err == nil {
					if err := os.WriteFile(filepath.Join(p, f), b, 0o644); err != nil {
						return fmt.Errorf("cgroup %s: %w", p, err)
					}
				}
			}
		}
		if !joins[e.Name()] {
			continue
		}
		if err := os.WriteFile(filepath.Join(p, "cgroup.procs"), self, 0o644); err != nil {
			return fmt.Errorf("join cgroup %s: %w", p, err)
		}
	}
	return nil
}

// nodeMounts makes a node's mounts in its own mount namespace: it refuses
// to run in the machine's. It first detaches every namespace file
// mounted there (the copies of /run/netns that the new namespace
// inherited would keep other labs' namespaces alive after they are
// deleted), then puts a tmpfs on each of tmpfs and binds SRC:DST.
func nodeMounts(tmpfs, binds []string, bpffs, outside string) error {
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil || outside == "" || self == outside {
		return errors.New("cluster exec: mounts asked for outside a mount namespace of the node's own")
	}
	ms, err := namespace.Mounts()
	if err != nil {
		return err
	}
	var nsfs []string
	for _, m := range ms {
		if m.FSType == "nsfs" {
			nsfs = append(nsfs, m.Point)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(nsfs)))
	for _, m := range nsfs {
		_ = unix.Unmount(m, unix.MNT_DETACH)
	}
	for _, d := range tmpfs {
		if err := unix.Mount("tmpfs", d, "tmpfs", 0, "mode=0755,size=64m"); err != nil {
			return fmt.Errorf("tmpfs on %s: %w", d, err)
		}
	}
	if bpffs != "" {
		// A bpffs of the node's own: what an agent pins there goes with
		// the namespace, and agents on other nodes never see it.
		if err := unix.Mount("bpffs", bpffs, "bpf", 0, "mode=0700"); err != nil {
			return fmt.Errorf("bpffs on %s: %w", bpffs, err)
		}
	}
	for _, b := range binds {
		src, dst, ok := strings.Cut(b, ":")
		if !ok {
			return fmt.Errorf("cluster exec: --bind %q: want SRC:DST", b)
		}
		if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s on %s: %w", src, dst, err)
		}
	}
	return nil
}

// unifiedCgroupNS puts the calling process in rel in the cgroup v2
// (unified) hierarchy, made there, and the calling thread in a new cgroup
// namespace rooted at it: a cgroup v2 mounted from inside shows rel as its
// root.
func unifiedCgroupNS(rel string) error {
	if rel == "" || filepath.IsAbs(rel) || strings.Contains(rel, "..") {
		return fmt.Errorf("cluster exec: bad cgroup %q", rel)
	}
	p := filepath.Join(process.CgroupRoot, "unified", rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		return fmt.Errorf("cgroup %s: %w", p, err)
	}
	if err := os.WriteFile(filepath.Join(p, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("join cgroup %s: %w", p, err)
	}
	if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
		return fmt.Errorf("cgroup namespace: %w", err)
	}
	return nil
}
