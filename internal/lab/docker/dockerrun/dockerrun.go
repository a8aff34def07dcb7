// Package dockerrun runs cnperf's servers and clients on the docker driver:
// a server as a container of the workload image in its sandbox's network
// namespace (docker run --network container:SANDBOX), a client as an exec
// in the sandbox (docker exec). Both report CPU and memory from their
// cgroups, as the netns driver's containers do.
package dockerrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/cnperf/cnperf/internal/lab/docker/dockerbuild"
	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/lab/process"
)

const apiTimeout = 60 * time.Second

// Where says on which engine and in which sandbox to run.
type Where struct {
	Client     *client.Client
	Lab        string
	Sandbox    string // container ID
	SandboxPID int
	Image      string
	CPUs       []int // the cores condition
	// Remote is set for an engine on another machine: its processes and
	// cgroups are not this machine's, so usage comes from the engine's
	// stats and an exec cannot be signalled.
	Remote bool
}

// cgroupOf is the cgroup of a process, relative to a controller's root, as
// /proc/PID/cgroup gives it for the memory controller (cgroup v1: the same
// path in every hierarchy, whichever cgroup driver the engine uses).
func cgroupOf(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && slices.Contains(strings.Split(f[1], ","), "memory") {
			return f[2], nil
		}
	}
	return "", fmt.Errorf("process %d: no memory cgroup (cgroup v1 is needed for usage)", pid)
}

// Server is a server container.
type Server struct {
	w      Where
	id     string
	pid    int
	cgroup string
	log    string
	process.Exit
}

// StartServer starts args (cnperf's arguments, without the program) as a
// container named cnperf-LAB-ROLE in the sandbox's network namespace; Stop
// copies its output to logPath.
func StartServer(w Where, role string, args []string, logPath string) (*Server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	r, err := w.Client.ContainerCreate(ctx,
		&container.Config{Image: w.Image, Cmd: args, Labels: map[string]string{engine.LabLabel: w.Lab, "cnperf.role": role}},
		&container.HostConfig{NetworkMode: container.NetworkMode("container:" + w.Sandbox),
			Resources: container.Resources{CpusetCpus: dockerbuild.Cpuset(w.CPUs)}}, nil, nil, "cnperf-"+w.Lab+"-"+role)
	if err != nil {
		return nil, fmt.Errorf("create %s container: %w", role, err)
	}
	s := &Server{w: w, id: r.ID, log: logPath, Exit: process.NewExit()}
	// Wait before start, so that even an instant exit is seen.
	waitc, errc := w.Client.ContainerWait(context.Background(), r.ID, container.WaitConditionNextExit)
	if err := w.Client.ContainerStart(ctx, r.ID, container.StartOptions{}); err != nil {
		return nil, fmt.Errorf("start %s container: %w", role, err)
	}
	go func() {
		select {
		case res := <-waitc:
			if res.StatusCode != 0 {
				s.End(fmt.Errorf("exit status %d", res.StatusCode))
			} else {
				s.End(nil)
			}
		case err := <-errc:
			s.End(fmt.Errorf("lost the engine: %w", err))
		}
	}()
	in, err := w.Client.ContainerInspect(ctx, r.ID)
	if err != nil {
		return nil, fmt.Errorf("inspect %s container: %w", role, err)
	}
	if in.State != nil && !w.Remote {
		s.pid = in.State.Pid
		s.cgroup, _ = cgroupOf(s.pid)
	}
	return s, nil
}

// PID is the server's process in the root pid namespace (0 once ended).
func (s *Server) PID() int { return s.pid }

// Usage reads the container's cgroup.
func (s *Server) Usage() (process.Usage, error) {
	if s.w.Remote {
		return engineUsage(s.w.Client, s.id)
	}
	if s.cgroup == "" {
		return process.Usage{}, errors.New("no cgroup known for the container")
	}
	return process.CgroupUsage(s.cgroup), nil
}

// Stop stops the container (SIGTERM, SIGKILL after grace), keeps its
// output in the log file and removes it. Stopping twice is harmless.
func (s *Server) Stop(grace time.Duration) error {
	if s.id == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	secs := int(grace.Seconds())
	_ = s.w.Client.ContainerStop(ctx, s.id, container.StopOptions{Timeout: &secs})
	if s.log != "" {
		if rc, err := s.w.Client.ContainerLogs(ctx, s.id, container.LogsOptions{ShowStdout: true, ShowStderr: true}); err == nil {
			if f, err := os.Create(s.log); err == nil {
				_, _ = stdcopy.StdCopy(f, f, rc)
				f.Close()
			}
			rc.Close()
		}
	}
	err := s.w.Client.ContainerRemove(ctx, s.id, container.RemoveOptions{Force: true})
	s.id = ""
	return err
}

// Exec is a client process running in a sandbox.
type Exec struct {
	w      Where
	cgroup string
	id     string
	pid    int
	before process.Usage
	process.Exit
}

// StartExec runs /cnperf with args in the sandbox, copying its output to
// stdout and stderr. Its usage is the sandbox cgroup's growth from now (the
// idle pause process adds nothing to CPU and a few MB to memory).
func StartExec(w Where, args []string, stdout, stderr io.Writer) (*Exec, error) {
	e := &Exec{w: w, Exit: process.NewExit()}
	if w.Remote {
		e.before, _ = engineUsage(w.Client, w.Sandbox)
	} else {
		rel, err := cgroupOf(w.SandboxPID)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		_ = process.ResetMemoryPeak(rel)
		e.cgroup, e.before = rel, process.CgroupUsage(rel)
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	r, err := w.Client.ContainerExecCreate(ctx, w.Sandbox, container.ExecOptions{
		Cmd: append([]string{"/cnperf"}, args...), AttachStdout: true, AttachStderr: true})
	if err != nil {
		return nil, fmt.Errorf("create exec: %w", err)
	}
	e.id = r.ID
	hj, err := w.Client.ContainerExecAttach(context.Background(), r.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("start exec: %w", err)
	}
	go func() {
		_, cerr := stdcopy.StdCopy(stdout, stderr, hj.Reader)
		err := execExit(w.Client, r.ID, cerr)
		hj.Close()
		e.End(err)
	}()
	for try := 0; try < 100 && e.pid == 0 && !w.Remote; try++ {
		in, err := w.Client.ContainerExecInspect(ctx, r.ID)
		if err != nil {
			break
		}
		e.pid = in.Pid
		if e.pid == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return e, nil
}

// execExit is how an exec whose stream ended (with cerr) exited: the
// stream ends a moment before the engine has the exit code.
func execExit(cli *client.Client, id string, cerr error) error {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	for try := 0; try < 50; try++ {
		in, err := cli.ContainerExecInspect(ctx, id)
		if err != nil {
			return fmt.Errorf("inspect exec: %w", err)
		}
		if !in.Running {
			if in.ExitCode != 0 {
				return fmt.Errorf("exit status %d", in.ExitCode)
			}
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cerr
}

// PID is the exec'd process.
func (e *Exec) PID() int { return e.pid }

// Usage is the sandbox cgroup's CPU since the exec started and its memory
// peak since then.
func (e *Exec) Usage() (process.Usage, error) {
	var u process.Usage
	if e.w.Remote {
		var err error
		if u, err = engineUsage(e.w.Client, e.w.Sandbox); err != nil {
			return u, err
		}
	} else {
		u = process.CgroupUsage(e.cgroup)
	}
	u.CPUSeconds -= e.before.CPUSeconds
	u.UserSeconds -= e.before.UserSeconds
	u.SystemSeconds -= e.before.SystemSeconds
	return u, nil
}

// Stop ends the process by PID (SIGTERM, SIGKILL after grace): the engine
// has no call to signal an exec. On a remote engine, where the PID is not
// this machine's, it waits grace for the process to end by itself (every
// client has a duration).
func (e *Exec) Stop(grace time.Duration) error {
	if done, _ := e.Exited(); done {
		return nil
	}
	if e.w.Remote {
		select {
		case <-e.Done():
			return nil
		case <-time.After(grace):
			return errors.New("an exec on a remote engine cannot be signalled: it ends by itself")
		}
	}
	if e.pid == 0 {
		return nil
	}
	_ = syscall.Kill(e.pid, syscall.SIGTERM)
	select {
	case <-e.Done():
		return nil
	case <-time.After(grace):
	}
	if err := syscall.Kill(e.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	<-e.Done()
	return nil
}

// engineUsage reads a container's CPU and memory from its engine's stats:
// the counters of its cgroup, as the engine reads them on its machine.
func engineUsage(cli *client.Client, id string) (process.Usage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	r, err := cli.ContainerStatsOneShot(ctx, id)
	if err != nil {
		return process.Usage{}, fmt.Errorf("stats of %.12s: %w", id, err)
	}
	defer r.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
		return process.Usage{}, fmt.Errorf("stats of %.12s: %w", id, err)
	}
	const ns = 1e9
	c := st.CPUStats.CPUUsage
	return process.Usage{Source: "engine", CPUSeconds: float64(c.TotalUsage) / ns, UserSeconds: float64(c.UsageInUsermode) / ns,
		SystemSeconds: float64(c.UsageInKernelmode) / ns, MemoryPeak: int64(st.MemoryStats.MaxUsage), MemoryCurrent: int64(st.MemoryStats.Usage)}, nil
}
