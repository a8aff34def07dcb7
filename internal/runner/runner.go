// Package runner carries out a spec: it builds one lab per mode side by
// side, starts ping and pong in each, and runs the plan's cells interleaved
// (round-robin over the modes, in chunks of sizes) so that drift on a shared
// machine hits every mode alike. Every sample is appended to the run as it
// arrives; the labs are removed on success, error and interruption.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cnperf/cnperf/internal/container"
	"github.com/cnperf/cnperf/internal/cost"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/modes"
	"github.com/cnperf/cnperf/internal/netnsutil"
	"github.com/cnperf/cnperf/internal/pingpong"
	"github.com/cnperf/cnperf/internal/progress"
	"github.com/cnperf/cnperf/internal/results"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/sysinfo"
)

// Options configure a run.
type Options struct {
	Spec    spec.Spec
	Dir     string    // run directory to create
	Exe     string    // the cnperf binary the servers run as
	Version string    // cnperf's version, stored in run.json
	Out     io.Writer // progress and messages (stderr)
}

// Result is what a run produced; the samples are in Dir.
type Result struct {
	Dir     string
	Meta    *Meta
	Samples int
}

// Hosts of a ping-pong lab: siege is the client outside the cluster.
var pingPongHosts = []string{"siege", "ping", "pong"}

// env is one mode's running lab.
type env struct {
	mode  lab.Mode
	lab   *lab.Lab
	procs map[string]*container.Process
	siege lab.Host
	ping  lab.Endpoint
}

// Run carries out the spec. When ctx is cancelled it stops measuring, keeps
// every sample so far, tears down and returns ctx's error with the result.
func Run(ctx context.Context, o Options) (*Result, error) {
	s := o.Spec
	if err := s.Validate(); err != nil {
		return nil, err
	}
	run, err := results.Create(o.Dir)
	if err != nil {
		return nil, err
	}
	defer run.Close()
	meta := &Meta{Format: 1, Cnperf: o.Version, ID: results.NewID("r"), Status: "running", Started: time.Now().UTC(), Spec: s, Machine: sysinfo.DescribeMachine()}
	sizes := s.PingPong.Plan().Sizes()
	meta.Sizes = len(sizes)
	if err := run.WriteMeta(meta); err != nil {
		return nil, err
	}
	res := &Result{Dir: o.Dir, Meta: meta}
	envs := map[string]*env{}
	finish := func(runErr error) (*Result, error) {
		teardown(envs, meta, o.Out)
		now := time.Now().UTC()
		meta.Finished = &now
		switch {
		case runErr == nil:
			meta.Status = "complete"
		case errors.Is(runErr, context.Canceled):
			meta.Status = "interrupted"
		default:
			meta.Status, meta.Error = "failed", runErr.Error()
		}
		if err := run.WriteMeta(meta); err != nil && runErr == nil {
			runErr = err
		}
		return res, runErr
	}

	committedBefore, _ := cost.Committed()
	logs := filepath.Join(o.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return finish(err)
	}
	fmt.Fprintf(o.Out, "cnperf: building %d labs (%s)\n", len(s.Modes), strings.Join(s.Modes, ", "))
	for _, name := range s.Modes {
		if err := ctx.Err(); err != nil {
			return finish(err)
		}
		m, err := modes.Lookup(name)
		if err != nil {
			return finish(err)
		}
		e, err := startMode(ctx, meta.ID, m, s, o.Exe, logs)
		if e != nil {
			envs[name] = e
		}
		if err != nil {
			return finish(fmt.Errorf("mode %s: %w", name, err))
		}
		mm := ModeMeta{Mode: name, Summary: m.Summary(), Lab: e.lab}
		nss, _ := netnsutil.List(lab.Prefix + e.lab.Name + "-")
		for _, ns := range nss {
			d, err := sysinfo.DescribeNetns(ns, true)
			if err != nil {
				return finish(err)
			}
			mm.Namespaces = append(mm.Namespaces, d)
			if ns == e.siege.NS && meta.ReceiveWindow == 0 {
				meta.ReceiveWindow = sysinfo.ReceiveWindow(d.Sysctls)
			}
		}
		meta.Modes = append(meta.Modes, mm)
	}
	if err := run.WriteMeta(meta); err != nil {
		return finish(err)
	}

	cells := plan(s, len(sizes))
	bar := progress.New(o.Out, len(cells), len(sizes)*s.PingPong.Repetitions*len(s.Modes))
	// The machine's CPU per core each second, tagged with the mode whose cell
	// ran, and the committed memory's peak.
	var curMode atomic.Value
	curMode.Store("")
	peak := committedBefore
	sctx, stopSampler := context.WithCancel(ctx)
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		_ = cost.Sample(sctx, time.Second, func(c cost.CPUSample) {
			c.Mode = curMode.Load().(string)
			peak = max(peak, c.Committed)
			_ = run.Append(c)
		})
	}()
	bytesByMode := map[string]int64{}
	var runErr error
	for i, c := range cells {
		if err := ctx.Err(); err != nil {
			runErr = err
			break
		}
		e := envs[c.mode]
		lo, hi := c.chunk*s.PingPong.Chunk, min((c.chunk+1)*s.PingPong.Chunk, len(sizes))
		reqs := pingpong.Requests(sizes[lo:hi], s.PingPong.Repetitions)
		cell := Cell{Index: i, Mode: c.mode, Chunk: c.chunk, Start: time.Now().UTC()}
		curMode.Store(c.mode)
		var appendErr error
		err := pingpong.Siege(ctx, pingpong.SiegeConfig{
			Target:      "http://" + e.ping.External,
			Concurrency: s.PingPong.Concurrency,
			Timeout:     s.PingPong.Timeout,
			Dial:        netnsutil.Dialer(e.siege.NS),
		}, reqs, func(smp pingpong.Sample) {
			smp.Mode, smp.Labels, smp.Cell = c.mode, s.Labels, i
			if err := run.Append(smp); err != nil && appendErr == nil {
				appendErr = err
			}
			res.Samples++
			cell.Samples++
			if !smp.OK() {
				cell.Failed++
			} else {
				bytesByMode[c.mode] += int64(smp.Length)
			}
			bar.Sample(!smp.OK())
		})
		cell.End = time.Now().UTC()
		meta.Cells = append(meta.Cells, cell)
		bar.Cell()
		if appendErr != nil {
			runErr = fmt.Errorf("store samples: %w", appendErr)
			break
		}
		if err := run.WriteMeta(meta); err != nil {
			runErr = err
			break
		}
		if err != nil {
			runErr = err
			break
		}
		if err := e.check(); err != nil {
			runErr = fmt.Errorf("mode %s: %w", c.mode, err)
			break
		}
	}
	bar.Done()
	stopSampler()
	<-samplerDone
	if now, err := cost.Committed(); err == nil {
		peak = max(peak, now)
	}
	if committedBefore > 0 {
		meta.Memory = &MemoryMeta{CommittedBefore: committedBefore, CommittedPeak: peak, CommittedDelta: peak - committedBefore}
	}
	for i := range meta.Modes {
		meta.Modes[i].Bytes = bytesByMode[meta.Modes[i].Mode]
	}
	return finish(runErr)
}

// cellPlan is one cell before it runs.
type cellPlan struct {
	mode  string
	chunk int
}

// plan interleaves the chunks over the modes: chunk k runs on every mode
// before chunk k+1, with the modes' order rotated by k so no mode always
// goes first after a pause.
func plan(s spec.Spec, nSizes int) []cellPlan {
	chunks := (nSizes + s.PingPong.Chunk - 1) / s.PingPong.Chunk
	var cells []cellPlan
	n := len(s.Modes)
	for k := 0; k < chunks; k++ {
		for j := 0; j < n; j++ {
			cells = append(cells, cellPlan{mode: s.Modes[(k+j)%n], chunk: k})
		}
	}
	return cells
}

// startMode builds a mode's lab and starts pong and ping in it.
func startMode(ctx context.Context, id string, m lab.Mode, s spec.Spec, exe, logs string) (*env, error) {
	name := id + "_" + m.Name()
	l, err := lab.Up(lab.Config{Name: name, Mode: m, Hosts: pingPongHosts, Port: s.PingPong.Port})
	if err != nil {
		return nil, err
	}
	e := &env{mode: m, lab: l, procs: map[string]*container.Process{}}
	if e.siege, err = l.Host("siege"); err != nil {
		return e, err
	}
	pong, err := l.Endpoint("pong")
	if err != nil {
		return e, err
	}
	if e.ping, err = l.Endpoint("ping"); err != nil {
		return e, err
	}
	p := s.PingPong
	servers := []struct {
		role string
		ep   lab.Endpoint
		args []string
	}{
		{"pong", pong, []string{exe, "serve", "pong", "--listen", pong.Listen, "--max-size", strconv.Itoa(p.MaxBody)}},
		{"ping", e.ping, []string{exe, "serve", "ping", "--listen", e.ping.Listen, "--pong", "http://" + pong.Internal,
			"--retries", strconv.Itoa(p.Retries), "--timeout", p.Timeout.String()}},
	}
	for _, sv := range servers {
		logf, err := os.Create(filepath.Join(logs, m.Name()+"-"+sv.role+".log"))
		if err != nil {
			return e, err
		}
		proc, err := container.Start(container.Spec{Lab: name, Name: sv.role, NetNS: sv.ep.NS, Container: sv.ep.Container,
			Args: sv.args, Stdout: logf, Stderr: logf})
		logf.Close() // the child holds its own descriptor
		if err != nil {
			return e, err
		}
		e.procs[sv.role] = proc
	}
	return e, e.waitReady(ctx)
}

// waitReady polls ping's /ping/4 from the siege host until pong answers
// through ping: the whole path works.
func (e *env) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DialContext: netnsutil.Dialer(e.siege.NS), DisableKeepAlives: true}}
	url := "http://" + e.ping.External + "/ping/4"
	deadline := time.Now().Add(15 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := e.check(); err != nil {
			return err
		}
		resp, err := client.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && string(b) == "pong" {
				return nil
			}
			err = fmt.Errorf("GET %s: %d %q", url, resp.StatusCode, b)
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("ping and pong did not answer within 15s: %v", last)
}

// check reports a server that has died.
func (e *env) check() error {
	for role, p := range e.procs {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s server exited (%v); see logs/%s-%s.log", role, err, e.mode.Name(), role)
		}
	}
	return nil
}

// teardown records the servers' usage, stops them and removes every lab.
func teardown(envs map[string]*env, meta *Meta, out io.Writer) {
	for i := range meta.Modes {
		mm := &meta.Modes[i]
		e := envs[mm.Mode]
		if e == nil {
			continue
		}
		for role, p := range e.procs {
			if u, err := p.Usage(); err == nil {
				if mm.Usage == nil {
					mm.Usage = map[string]container.Usage{}
				}
				mm.Usage[role] = u
			}
		}
	}
	for _, e := range envs {
		for _, p := range e.procs {
			_ = p.Stop(3 * time.Second)
		}
		if e.lab != nil {
			if err := lab.Down(e.lab.Name); err != nil {
				fmt.Fprintf(out, "cnperf: removing lab %s: %v (run `cnperf clean`)\n", e.lab.Name, err)
			}
			_, _ = container.CleanCgroups(e.lab.Name)
		}
	}
}
