// Package daemons starts a test cluster's daemons and records how, so
// that a disruption (a spec's disrupt, on the kubernetes driver) can stop
// one by its PID and start it again the way the cluster did, without
// linking the testcluster package.
package daemons

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/poll"
)

// Daemon is a process a cluster runs for its lifetime.
type Daemon struct {
	Role   string   `json:"role"`          // what status calls it: etcd, node1-kubelet
	NS     string   `json:"ns,omitempty"`  // the lab namespace it runs in ("": the root one)
	Cgroup string   `json:"cgroup"`        // its cgroup under every v1 controller (cnperf/NAME/...)
	Argv   []string `json:"argv"`          // argv[0] is the program
	Env    []string `json:"env,omitempty"` // added to the environment
	Exe    string   `json:"exe"`           // the cnperf binary it is started through
	// Node makes a mount namespace of its own for it (a node's first
	// daemon, containerd), with these tmpfs and bind mounts (SRC:DST).
	Node  bool     `json:"node,omitempty"`
	Tmpfs []string `json:"tmpfs,omitempty"`
	BPFFS string   `json:"bpffs,omitempty"` // a bpffs of the node's own here
	Binds []string `json:"binds,omitempty"`
	// MntPID joins this process's mount namespace (a node's others);
	// Joined records that it did, so that Start again joins the node's.
	MntPID int  `json:"-"`
	Joined bool `json:"joined,omitempty"`
	// CgroupNS puts it in a cgroup namespace rooted at its own cgroup v2
	// (Cgroup, made in the unified hierarchy too).
	CgroupNS bool `json:"cgroupns,omitempty"`
}

// Recorded is a daemon the pid file names.
type Recorded struct {
	owner.ID
	Role string
}

// pidFile is where a cluster records its daemons: "PID START ROLE" lines.
func pidFile(dir string) string { return filepath.Join(dir, "pids") }

// launchFile is how a daemon was started, for Start again.
func launchFile(dir, role string) string { return filepath.Join(dir, "daemons", role+".json") }

// Start starts d detached (a session of its own, stdin /dev/null, its
// output appended to DIR/logs/ROLE.log) through `cnperf cluster exec`,
// which joins d's cgroups and makes its mounts before it execs d's
// program, so that nothing d forks escapes the cgroups. It records the
// PID and start time (replacing the role's earlier line), so that status
// and down never mistake a reused PID, and how it was started.
func Start(dir string, d Daemon) (owner.ID, error) {
	args := []string{"cluster", "exec", "--cgroup", d.Cgroup}
	for _, t := range d.Tmpfs {
		args = append(args, "--tmpfs", t)
	}
	for _, b := range d.Binds {
		args = append(args, "--bind", b)
	}
	if d.BPFFS != "" {
		args = append(args, "--bpffs", d.BPFFS)
	}
	if d.CgroupNS {
		args = append(args, "--cgroupns")
	}
	if d.Node {
		// The machine's mount namespace, which the node's mounts must not
		// be made in.
		mnt, err := os.Readlink("/proc/self/ns/mnt")
		if err != nil {
			return owner.ID{}, err
		}
		args = append(args, "--outside", mnt)
	}
	argv := d.Argv
	if d.MntPID > 0 {
		argv = append([]string{"nsenter", fmt.Sprintf("--mount=/proc/%d/ns/mnt", d.MntPID), "--"}, argv...)
	}
	args = append(append(args, "--"), argv...)
	logf, err := os.OpenFile(filepath.Join(dir, "logs", d.Role+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return owner.ID{}, err
	}
	defer logf.Close() // the child holds its own
	cmd := exec.Command(d.Exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), d.Env...)
	cmd.Dir = "/"
	// No parent-death signal: the cluster outlives its starter.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if d.Node {
		// Go makes every mount private in the new namespace (MS_REC|
		// MS_PRIVATE on /) before it execs: nothing mounted there reaches
		// the machine's mount table.
		cmd.SysProcAttr.Unshareflags = syscall.CLONE_NEWNS
	}
	if d.NS != "" {
		err = namespace.Do(d.NS, cmd.Start)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return owner.ID{}, fmt.Errorf("start %s: %w", d.Role, err)
	}
	go func() { _ = cmd.Wait() }() // reaped while the starter runs; init's after
	id, err := owner.Of(cmd.Process.Pid)
	if err != nil {
		return owner.ID{}, fmt.Errorf("%s exited at once (logs/%s.log)", d.Role, d.Role)
	}
	d.Joined = d.Joined || d.MntPID > 0
	if err := writeLaunch(dir, d); err != nil {
		return id, err
	}
	return id, record(dir, Recorded{ID: id, Role: d.Role})
}

func writeLaunch(dir string, d Daemon) error {
	if err := os.MkdirAll(filepath.Join(dir, "daemons"), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return os.WriteFile(launchFile(dir, d.Role), b, 0o644)
}

// record writes r's line in the pid file, in place of its role's earlier
// one.
func record(dir string, r Recorded) error {
	recs, err := Read(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var b strings.Builder
	for _, o := range recs {
		if o.Role != r.Role {
			fmt.Fprintf(&b, "%d %d %s\n", o.PID, o.Start, o.Role)
		}
	}
	fmt.Fprintf(&b, "%d %d %s\n", r.PID, r.Start, r.Role)
	tmp := pidFile(dir) + ".new"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, pidFile(dir))
}

// Read reads a cluster's pid file.
func Read(dir string) ([]Recorded, error) {
	f, err := os.Open(pidFile(dir))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Recorded
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
		out = append(out, Recorded{ID: id, Role: fs[2]})
	}
	return out, sc.Err()
}

// find is role's recorded process.
func find(dir, role string) (Recorded, error) {
	recs, err := Read(dir)
	if err != nil {
		return Recorded{}, fmt.Errorf("the cluster's daemons: %w", err)
	}
	for _, r := range recs {
		if r.Role == role {
			return r, nil
		}
	}
	return Recorded{}, fmt.Errorf("the cluster runs no %s", role)
}

// stopGrace is how long Stop waits after SIGTERM before SIGKILL: an
// agent's orderly shutdown is what an upgrade does.
const stopGrace = 10 * time.Second

// Stop stops role's process as its supervisor would (SIGTERM, SIGKILL
// after stopGrace) and returns when it is gone. What it forked (a
// containerd's shims) stays, as systemd's KillMode=process leaves it.
func Stop(dir, role string) (time.Time, error) {
	r, err := find(dir, role)
	if err != nil {
		return time.Time{}, err
	}
	if r.Gone() {
		return time.Time{}, fmt.Errorf("%s (pid %d) is not running", role, r.PID)
	}
	_ = syscall.Kill(r.PID, syscall.SIGTERM)
	gone := func() (bool, error) { return r.Gone(), nil }
	if err := poll.Until(context.Background(), stopGrace, 5*time.Millisecond, gone); err != nil {
		_ = syscall.Kill(r.PID, syscall.SIGKILL)
		if err := poll.Until(context.Background(), 5*time.Second, 5*time.Millisecond, gone); err != nil {
			return time.Time{}, fmt.Errorf("%s (pid %d) did not exit after SIGKILL", role, r.PID)
		}
	}
	return time.Now(), nil
}

// StartAgain starts role as it was started before, in its node's mount
// namespace as it is (entered through another of the node's daemons, so
// a node's containerd makes no new one), and records its new PID.
func StartAgain(dir, role string) (time.Time, error) {
	b, err := os.ReadFile(launchFile(dir, role))
	if err != nil {
		return time.Time{}, fmt.Errorf("how %s was started: %w", role, err)
	}
	var d Daemon
	if err := json.Unmarshal(b, &d); err != nil {
		return time.Time{}, fmt.Errorf("how %s was started: %w", role, err)
	}
	if d.Node || d.Joined {
		host, _, _ := strings.Cut(role, "-")
		recs, err := Read(dir)
		if err != nil {
			return time.Time{}, err
		}
		for _, r := range recs {
			if r.Role != role && strings.HasPrefix(r.Role, host+"-") && !r.Gone() {
				d.MntPID = r.PID
				break
			}
		}
		if d.MntPID == 0 {
			return time.Time{}, fmt.Errorf("%s: no daemon of %s runs whose mount namespace it could join", role, host)
		}
		d.Node, d.Tmpfs, d.Binds, d.BPFFS = false, nil, nil, ""
	}
	at := time.Now()
	if _, err := Start(dir, d); err != nil {
		return at, err
	}
	return at, nil
}
