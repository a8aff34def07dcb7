package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/kube/inpod"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/record"
)

// Exe is where the workload image holds cnperf.
const Exe = "/cnperf"

// Runtime is a lab's pods as the runner uses them: it starts servers and
// clients in them by exec and reports a pod that stopped running.
type Runtime struct {
	lab.BaseRuntime // nothing to record
	c               *Conn
	ns              string
	pods            []*record.KubePod
	// nodes are the nodes the lab's pods are on.
	nodes []string
	// svc is what the services condition puts on the cluster (nil: none).
	svc *servicesPlan
	// disrupt are the spec's disruptions of the test cluster's daemons
	// (disrupt.go), whose records are in disruptDir.
	disrupt    []disruption
	disruptDir string
	// build makes the pods a disruption creates, prober is the client
	// pod that dials them, newPods counts them (under mu).
	build   *Build
	prober  *record.KubePod
	newPods int

	mu        sync.Mutex
	lastCheck time.Time
	lastErr   error
}

// checkEvery bounds how often Alive asks the API server.
const checkEvery = 2 * time.Second

// Sight: the pods' processes are out of this machine's cgroups' sight, and
// the runner cannot enter the pods (it runs siege through exec).
func (r *Runtime) Sight() lab.Sight { return lab.Sight{Local: true, Own: false, Remote: true} }

// Alive reports a pod of the lab that no longer runs.
func (r *Runtime) Alive() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.lastCheck) < checkEvery {
		return r.lastErr
	}
	r.lastCheck = time.Now()
	list := &corev1.PodList{}
	if err := r.c.list(context.Background(), r.c.core, r.ns, "pods", list); err != nil {
		r.lastErr = nil // the API server may be busy; the pods are what matter
		return nil
	}
	phase := map[string]corev1.PodPhase{}
	for _, p := range list.Items {
		phase[p.Name] = p.Status.Phase
	}
	r.lastErr = nil
	for _, p := range r.pods {
		if ph := phase[p.Pod]; ph != corev1.PodRunning {
			r.lastErr = fmt.Errorf("kubernetes: pod %s on node %s is %q, not running", p.Pod, p.Node, ph)
			break
		}
	}
	return r.lastErr
}

// StartServer starts a server in an endpoint's pod: it runs until Stop,
// and a run that dies takes it along (inpod.Run ends it when the exec
// stream closes).
// Its output goes to s.Log for as long as it runs. The pods run the
// workload image; a server image of the spec's is refused.
func (r *Runtime) StartServer(ep lab.Endpoint, s lab.Server) (lab.Proc, error) {
	if s.Image != "" {
		return nil, fmt.Errorf("%s server: image %s: the %s driver runs servers in its workload image only", s.Role, s.Image, Name)
	}
	logf, err := os.Create(s.Log)
	if err != nil {
		return nil, err
	}
	p, err := r.start(ep, s.Args, logf, logf)
	if err != nil {
		logf.Close()
		return nil, err
	}
	// The stream copies into the log as long as the server runs.
	go func() { <-p.Done(); logf.Close() }()
	return p, nil
}

// StartClient starts a client in an endpoint's (or a host's) pod.
func (r *Runtime) StartClient(ep lab.Endpoint, name string, args []string, stdout, stderr io.Writer) (lab.Proc, error) {
	return r.start(ep, args, stdout, stderr)
}

func (r *Runtime) start(ep lab.Endpoint, args []string, stdout, stderr io.Writer) (lab.Proc, error) {
	if ep.Kube == nil {
		return nil, fmt.Errorf("kubernetes: endpoint %s has no pod", ep.Role)
	}
	if len(args) < 1 {
		return nil, errors.New("kubernetes: nothing to run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	p := &Proc{r: r, pod: ep.Kube.Pod, Exit: process.NewExit(), stdin: pw, cancel: cancel, pidc: make(chan struct{})}
	split := inpod.Split(stderr, p.setPID, p.setUsage)
	cmd := append([]string{Exe, "pod", "run", "--"}, args[1:]...) // args[0] is this machine's binary
	go func() {
		err := r.exec(ctx, p.pod, cmd, pr, stdout, split)
		_ = pw.Close() // frees the stream's stdin copier, if it still waits
		_ = split.Close()
		p.End(exitError(err))
		cancel()
	}()
	// The PID comes first: once it is known, Usage and Bound work.
	select {
	case <-p.pidc:
	case <-p.Done():
	case <-time.After(apiTimeout):
		_ = p.Stop(0)
		return nil, fmt.Errorf("kubernetes: pod %s: no answer from exec within %s", p.pod, apiTimeout)
	}
	return p, nil
}

// exitError makes an exec's end an error as os/exec's would be: nil for
// exit status 0, the code otherwise.
func exitError(err error) error {
	var ce interface{ ExitStatus() int }
	if errors.As(err, &ce) {
		return fmt.Errorf("exit status %d", ce.ExitStatus())
	}
	return err
}

// exec runs cmd in a pod's workload container.
func (r *Runtime) exec(ctx context.Context, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) error {
	req := r.c.core.Post().Resource("pods").Namespace(r.ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: Container, Command: cmd, Stdin: stdin != nil,
			Stdout: stdout != nil, Stderr: stderr != nil}, r.c.params)
	// A stream lasts as long as its process: no client timeout on it.
	cfg := rest.CopyConfig(r.c.REST)
	cfg.Timeout = 0
	ex, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return fmt.Errorf("kubernetes: exec in pod %s: %w", pod, err)
	}
	return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// output runs a short command in a pod and returns what it printed.
func (r *Runtime) output(pod string, cmd ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	if err := r.exec(ctx, pod, cmd, nil, &out, &errb); err != nil {
		return "", fmt.Errorf("kubernetes: %s in pod %s: %w: %s", strings.Join(cmd, " "), pod, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Proc is a process started by exec in a pod.
type Proc struct {
	r      *Runtime
	pod    string
	stdin  *io.PipeWriter
	cancel context.CancelFunc

	mu    sync.Mutex
	pid   int
	pidc  chan struct{}
	final *record.Usage
	process.Exit
}

func (p *Proc) setPID(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pid == 0 {
		p.pid = pid
		close(p.pidc)
	}
}

func (p *Proc) setUsage(u record.Usage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.final = &u
}

// PID is the process's PID inside its pod (0 until known).
func (p *Proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
}

// Stop ends the process: its stdin closes, so inpod.Run sends SIGTERM and,
// after inpod.Grace, SIGKILL. With grace 0 the stream is cut at once too.
func (p *Proc) Stop(grace time.Duration) error {
	_ = p.stdin.Close()
	wait := grace + inpod.Grace + 2*time.Second
	if grace == 0 {
		wait = inpod.Grace + 2*time.Second
	}
	select {
	case <-p.Done():
	case <-time.After(wait):
		p.cancel()
		<-p.Done()
	}
	return nil
}

// Usage is the process's CPU and memory: from /proc inside the pod while it
// runs, its rusage once it has ended.
func (p *Proc) Usage() (record.Usage, error) {
	p.mu.Lock()
	final, pid := p.final, p.pid
	p.mu.Unlock()
	if final != nil {
		return *final, nil
	}
	if pid == 0 {
		return record.Usage{}, errors.New("kubernetes: process has no PID yet")
	}
	out, err := p.r.output(p.pod, Exe, "pod", "usage", "--pid", strconv.Itoa(pid))
	if err != nil {
		// It may have ended meanwhile: then its rusage is on the way.
		select {
		case <-p.Done():
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.final != nil {
				return *p.final, nil
			}
		default:
		}
		return record.Usage{}, err
	}
	var u record.Usage
	if err := json.Unmarshal([]byte(out), &u); err != nil {
		return record.Usage{}, fmt.Errorf("kubernetes: usage from pod %s: %w", p.pod, err)
	}
	return u, nil
}

// Bound says whether the process listens on port over every protocol.
func (p *Proc) Bound(port int, protocols []string) bool {
	pid := p.PID()
	if pid == 0 {
		return false
	}
	out, err := p.r.output(p.pod, Exe, "pod", "bound", "--pid", strconv.Itoa(pid), "--port", strconv.Itoa(port),
		"--proto", strings.Join(protocols, ","))
	return err == nil && strings.TrimSpace(out) == "yes"
}
