package testcluster

import (
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
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/testcluster/daemons"
)

// start starts d through the cnperf binary of up (daemons.Start) and
// keeps it among the daemons up watches.
func (c *builder) start(d daemons.Daemon) (int, error) {
	d.Exe = c.o.Exe
	id, err := daemons.Start(c.dir, d)
	if err != nil {
		return 0, err
	}
	c.daemons = append(c.daemons, daemons.Recorded{ID: id, Role: d.Role})
	return id.PID, nil
}

// readPids reads a cluster's pid file.
func readPids(name string) ([]daemons.Recorded, error) { return daemons.Read(Dir(name)) }

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
