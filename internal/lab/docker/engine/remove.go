package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"golang.org/x/sys/unix"
)

// LabLabel marks every container and network cnperf creates on an engine,
// with the lab's name as its value.
const LabLabel = "cnperf.lab"

// removeLabelled removes the lab's containers and networks from the engine
// the run dir notes (Target.note).
func removeLabelled(note, lab string) error {
	if err := removeLabelledContainers(note, lab); err != nil {
		return err
	}
	return removeLabelledNetworks(note, lab)
}

// removeLabelledContainers removes the lab's containers from the engine at
// url, by force.
func removeLabelledContainers(note, lab string) error {
	url, _, _ := strings.Cut(note, " ")
	cli, err := connect(note)
	if err != nil {
		return fmt.Errorf("docker host %s: %w", url, err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: labelled(lab)})
	if err != nil {
		return fmt.Errorf("docker host %s: list cnperf's containers: %w", url, err)
	}
	var errs []error
	for _, c := range list {
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeLabelledNetworks removes the lab's networks from the engine at
// url. A swarm's overlay network outlives its last container on another
// node for a moment, so a network still in use is tried again for a while.
func removeLabelledNetworks(note, lab string) error {
	url, _, _ := strings.Cut(note, " ")
	cli, err := connect(note)
	if err != nil {
		return fmt.Errorf("docker host %s: %w", url, err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	nets, err := cli.NetworkList(ctx, network.ListOptions{Filters: labelled(lab)})
	if err != nil {
		return fmt.Errorf("docker host %s: list cnperf's networks: %w", url, err)
	}
	var errs []error
	for _, n := range nets {
		var last error
		_ = poll.Until(ctx, 20*time.Second, 250*time.Millisecond, func() (bool, error) {
			last = cli.NetworkRemove(ctx, n.ID)
			return last == nil || client.IsErrNotFound(last), nil
		})
		if last != nil && !client.IsErrNotFound(last) {
			errs = append(errs, fmt.Errorf("docker host %s: remove network %s: %w", url, n.Name, last))
		}
	}
	return errors.Join(errs...)
}

func labelled(lab string) filters.Args {
	return filters.NewArgs(filters.Arg("label", LabLabel+"="+lab))
}

// connect reaches a user's engine as the lab's run dir notes it
// (Target.note): --docker-host's unix:// or tcp://, or an engines: URL,
// with the TLS it was reached with.
func connect(note string) (*client.Client, error) {
	t, err := noted(note)
	if err != nil {
		return nil, err
	}
	return t.Client()
}

// removeContainers removes, by force, the lab's containers on the engine
// answering at sock, if one does.
func removeContainers(sock, lab string) {
	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+sock), client.WithAPIVersionNegotiation())
	if err != nil {
		return
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", LabLabel+"="+lab))})
	if err != nil {
		return
	}
	for _, c := range list {
		_ = cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
	}
}

// Labs lists the labs that have engine state on this machine.
func Labs() ([]string, error) {
	entries, err := os.ReadDir(RunRoot)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var labs []string
	for _, e := range entries {
		if e.IsDir() {
			labs = append(labs, e.Name())
		}
	}
	return labs, nil
}

// Remove deletes every trace of a lab's engines, also after cnperf was
// killed: processes started with the lab's paths (dockerd, containerd and
// its shims) by PID, mounts under the lab's directories, the shims' sockets
// and libnetwork's files for the lab's networks (both at paths Docker fixes),
// and the directories. Removing what is not there is not an error.
func Remove(lab string) error {
	if lab == "" || strings.ContainsAny(lab, "/.") {
		return fmt.Errorf("engine: bad lab name %q", lab)
	}
	run, data := RunDir(lab), DataDir(lab)
	if _, err := os.Stat(run); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(data); errors.Is(err, os.ErrNotExist) {
			return nil
		}
	}
	var errs []error
	if Remote(lab) {
		return removeRemote(lab)
	}
	// A user's own engine: remove what cnperf labelled on it, nothing else.
	if b, err := os.ReadFile(filepath.Join(run, existingFile)); err == nil {
		if err := removeLabelled(strings.TrimSpace(string(b)), lab); err != nil {
			return err
		}
		return os.RemoveAll(run)
	}
	// Through the API first, where a dockerd still answers: removing the
	// containers by force is quicker than its shutdown's stop timeouts.
	socks, _ := filepath.Glob(filepath.Join(run, "*", "docker.sock"))
	var wg sync.WaitGroup
	for _, sock := range socks {
		wg.Add(1)
		go func() { defer wg.Done(); removeContainers(sock, lab) }()
	}
	wg.Wait()
	// dockerd next, so that it can still clean up, then the rest.
	killMatching(run, dockerdName)
	killMatching(run, "")
	shimSockets := shimSockets(run)
	if err := unmountUnder(run, data); err != nil {
		errs = append(errs, err)
	}
	for _, p := range shimSockets {
		_ = os.Remove(p)
	}
	for _, id := range readLines(filepath.Join(run, networksFile)) {
		if id != "" && !strings.ContainsAny(id, "/.") {
			_ = os.RemoveAll(filepath.Join(libnetworkFiles, "lb_"+id))
		}
	}
	for _, d := range []string{run, data} {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
		}
	}
	if labs, _ := Labs(); len(labs) == 0 {
		removeDefaultPaths()
	}
	return errors.Join(errs...)
}

// killMatching ends, by PID, the processes whose command line mentions dir
// (and whose program is named bin, when given): SIGTERM, then SIGKILL.
func killMatching(dir, bin string) {
	pids := pidsMentioning(dir, bin)
	if len(pids) == 0 {
		return
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	_ = poll.Until(context.Background(), stopWithin, 100*time.Millisecond, func() (bool, error) {
		return len(pidsMentioning(dir, bin)) == 0, nil
	})
	for _, p := range pidsMentioning(dir, bin) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	time.Sleep(100 * time.Millisecond)
}

// pidsMentioning scans /proc for command lines holding dir+"/".
func pidsMentioning(dir, bin string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if bin != "" && filepath.Base(args[0]) != bin {
			continue
		}
		if strings.Contains(string(b), dir+"/") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// shimSockets reads where containerd's shims of the lab put their sockets:
// containerd 1.6 puts them under /run/containerd/s whatever its state dir.
func shimSockets(run string) []string {
	files, _ := filepath.Glob(filepath.Join(run, "containerd", "state", "io.containerd.runtime.v2.task", "*", "*", "address"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		p := strings.TrimPrefix(strings.TrimSpace(string(b)), "unix://")
		if strings.HasPrefix(p, "/run/containerd/s/") && !strings.Contains(p, "..") {
			out = append(out, p)
		}
	}
	return out
}

// unmountUnder detaches every mount below the given directories, deepest
// first: the daemons' network namespace files, overlay roots, shm.
func unmountUnder(dirs ...string) error {
	ms, err := namespace.Mounts()
	if err != nil {
		return err
	}
	var points []string
	for _, m := range ms {
		for _, d := range dirs {
			if strings.HasPrefix(m.Point, d+"/") {
				points = append(points, m.Point)
			}
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func readLines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// Paths Docker and containerd use whatever their flags say. cnperf notes
// which of them it made (they were missing when it started its first
// engine) and removes them, once empty, when its last lab is gone.
var defaultPaths = []string{
	"/etc/docker",
	"/var/lib/docker", "/var/lib/docker/network", libnetworkFiles,
	"/run/docker", "/run/docker/plugins",
	"/run/containerd", "/run/containerd/s",
}

const (
	libnetworkFiles = "/var/lib/docker/network/files" // overlay load-balancer sandboxes
	networksFile    = "networks"                      // the lab's network IDs, in its run dir
)

func createdPathsFile() string { return filepath.Join(filepath.Dir(DataRoot), "docker-created-paths") }

// noteDefaultPaths records which default paths do not exist yet.
func noteDefaultPaths() error {
	have := map[string]bool{}
	for _, p := range readLines(createdPathsFile()) {
		have[p] = true
	}
	var add []string
	for _, p := range defaultPaths {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) && !have[p] {
			add = append(add, p)
		}
	}
	if len(add) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(createdPathsFile()), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(createdPathsFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(strings.Join(add, "\n") + "\n")
	return err
}

// removeDefaultPaths removes the default paths cnperf made, deepest first,
// each only if empty, and then cnperf's own roots if empty.
func removeDefaultPaths() {
	paths := readLines(createdPathsFile())
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	for _, p := range paths {
		if p != "" {
			_ = os.Remove(p) // fails, harmlessly, when not empty
		}
	}
	_ = os.Remove(createdPathsFile())
	for _, d := range []string{RunRoot, filepath.Dir(RunRoot), DataRoot, filepath.Dir(DataRoot)} {
		_ = os.Remove(d)
	}
}

// RecordNetwork notes a network the lab created, so that Remove can find
// libnetwork's files for it.
func (s *Set) RecordNetwork(id string) error {
	f, err := os.OpenFile(filepath.Join(RunDir(s.Lab), networksFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(id + "\n")
	return err
}

// SandboxNetNS finds the network namespace of a host's sandbox container
// in a docker-driver lab (for `cnperf lab exec --container`), from the
// host's engine, or the existing engine the lab runs on.
func SandboxNetNS(lab, host string) (string, error) {
	url := "unix://" + filepath.Join(RunDir(lab), host, "docker.sock")
	if b, err := os.ReadFile(filepath.Join(RunDir(lab), existingFile)); err == nil {
		url = strings.TrimSpace(string(b))
	} else if _, err := os.Stat(filepath.Join(RunDir(lab), host, "docker.sock")); err != nil {
		return "", fmt.Errorf("lab %s has no engine on host %s", lab, host)
	}
	cli, err := connect(url)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := cli.ContainerInspect(ctx, "cnperf-"+lab+"-"+host+"-sandbox")
	if err != nil {
		return "", fmt.Errorf("sandbox of %s in lab %s: %w", host, lab, err)
	}
	if in.State == nil || in.State.Pid == 0 {
		return "", fmt.Errorf("sandbox of %s in lab %s is not running", host, lab)
	}
	return fmt.Sprintf("/proc/%d/ns/net", in.State.Pid), nil
}
