package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/pingpong/siege"
)

// pingPongTopology is ping-pong's lab: siege, the client outside the
// cluster, on a host of its own without endpoints; ping and pong each in an
// endpoint on a host of their own.
var pingPongTopology = lab.Topology{Hosts: []lab.HostSpec{
	{Name: "siege"},
	{Name: "ping", Endpoints: []lab.EndpointSpec{{Role: "ping"}}},
	{Name: "pong", Endpoints: []lab.EndpointSpec{{Role: "pong"}}},
}}

// pingPong runs a size sweep (workload.SizeSweep: Kratzke's HTTP
// ping-pong, siege → ping → pong) over cells: siege outside the cluster
// sends requests to ping, which asks pong for the message; a cell's unit is
// a chunk of the size plan. What it starts and runs is the workload
// descriptor's; which hosts it runs on and how a cell is measured are the
// runner's.
type pingPong struct {
	s     spec.Spec
	w     workload.SizeSweep
	sizes []int
}

func newPingPong(s spec.Spec) *pingPong {
	return &pingPong{s: s, w: pingpong.Descriptor, sizes: s.PingPong.Plan().Sizes()}
}

// settings are the spec's ping-pong section as the descriptor takes it.
func (p *pingPong) settings() workload.SweepSettings {
	pp := p.s.PingPong
	return workload.SweepSettings{MaxBody: pp.MaxBody, Retries: pp.Retries, Timeout: pp.Timeout, Repetitions: pp.Repetitions, Concurrency: pp.Concurrency}
}

func (p *pingPong) labConfig() lab.Config {
	return lab.Config{Topology: pingPongTopology, Port: p.s.PingPong.Port}
}

func (p *pingPong) units() int {
	return (len(p.sizes) + p.s.PingPong.Chunk - 1) / p.s.PingPong.Chunk
}

// chunk returns unit u's sizes: the plan cut into chunks of the spec's
// chunk size, in order, the last one shorter (empty past the end).
func (p *pingPong) chunk(u int) []int {
	n := p.s.PingPong.Chunk
	lo := min(u*n, len(p.sizes))
	return p.sizes[lo:min(lo+n, len(p.sizes))]
}

func (p *pingPong) expectedSamples(modes int) int {
	return len(p.sizes) * p.s.PingPong.Repetitions * modes
}

func (p *pingPong) describeCell(int, *record.Cell) {}

// describeRun: a size sweep's run says how many sizes its plan holds.
func (p *pingPong) describeRun(meta *record.Meta) { meta.Sizes = len(p.sizes) }

// start starts the descriptor's servers in their order (pong, then ping
// in front of it) and waits until the whole path answers.
func (p *pingPong) start(ctx context.Context, e *env, exe, logs string) error {
	eps := map[string]lab.Endpoint{}
	for _, role := range []string{"pong", "ping"} {
		ep, err := e.lab.Endpoint(role)
		if err != nil {
			return err
		}
		eps[role] = ep
	}
	at := func(role string) workload.SweepAddr {
		return workload.SweepAddr{Listen: eps[role].Listen, Internal: eps[role].Internal}
	}
	for _, srv := range p.w.Servers(p.settings(), at) {
		ep, ok := eps[srv.Role]
		if !ok {
			return fmt.Errorf("%s server: the lab has no %s endpoint", srv.Role, srv.Role)
		}
		// pingpong.servers may name other implementations (servers.go).
		v := spec.ServerValues{Listen: ep.Listen, Pong: eps["pong"].Internal}
		if err := p.startRole(e, srv.Role, ep, append([]string{exe}, srv.Args...), v, logs); err != nil {
			return err
		}
	}
	return p.waitReady(ctx, e)
}

// runCell sends one chunk of sizes, every repetition, through siege.
func (p *pingPong) runCell(ctx context.Context, e *env, chunk int, cell *record.Cell, app *appender) error {
	client, err := e.lab.Host(p.w.Client())
	if err != nil {
		return err
	}
	target, err := e.lab.Endpoint(p.w.Target())
	if err != nil {
		return err
	}
	mode := e.key
	emit := func(smp record.Sample) {
		smp.Mode, smp.Labels, smp.Cell = mode, p.s.Labels, cell.Index
		cell.Samples++
		if !smp.OK() {
			cell.Failed++
		} else {
			app.bytes[envKey(e.key, e.instance)] += int64(smp.Length)
		}
		app.add(smp, !smp.OK())
	}
	set := p.settings()
	if l, ok := e.remote(); ok {
		return p.siegeThrough(ctx, l, client, target, p.chunk(chunk), set, emit)
	}
	// siege runs in this process, its connections dialled from inside
	// the client host's namespace, as ping-pong has always measured.
	reqs := pingpong.Requests(p.chunk(chunk), set.Repetitions)
	return siege.Run(ctx, siege.Config{
		Target:      "http://" + target.External,
		Concurrency: set.Concurrency,
		Timeout:     set.Timeout,
		Dial:        namespace.Dialer(client.NS),
	}, reqs, emit)
}

// siegeThrough runs siege as a client process on the client host through
// a driver that runs processes itself (a pod on the kubernetes driver):
// the descriptor's command line for the chunk, every sample back as a line
// of JSON.
func (p *pingPong) siegeThrough(ctx context.Context, l lab.Launcher, client lab.Host, target lab.Endpoint, sizes []int,
	set workload.SweepSettings, emit func(record.Sample)) error {
	args := append([]string{"cnperf"}, p.w.ClientArgs(set, target.External, sizes)...)
	var bad error
	out := &lineWriter{fn: func(line []byte) {
		smp, ok, err := siegeLine(line)
		if err != nil {
			if bad == nil {
				bad = fmt.Errorf("siege printed %q: %w", line, err)
			}
			return
		}
		if ok {
			emit(smp)
		}
	}}
	var stderr bytes.Buffer
	proc, err := l.StartClient(lab.Endpoint{Host: client.Name, Kube: client.Kube}, "siege", args, out, &stderr)
	if err != nil {
		return err
	}
	select {
	case <-proc.Done():
	case <-ctx.Done():
		_ = proc.Stop(5 * time.Second) // siege prints what it has on SIGTERM
	}
	out.flush()
	if _, err := proc.Exited(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("siege on %s: %v: %s", client.Name, err, lastLine(stderr.String()))
	}
	return bad
}

// siegeLine reads one line siege printed: an envelope's interval line is
// a sample (its fields beside workload and kind), its start and end lines
// are not (ok false); a line without a kind is a bare sample, as siege's
// --format jsonl prints it. Either way the sample is stored as runs have
// always stored it: the record.Sample's own fields.
func siegeLine(line []byte) (smp record.Sample, ok bool, err error) {
	if env, derr := workload.Decode(line); derr == nil {
		if env.Workload != pingpong.Descriptor.Name() {
			return smp, false, fmt.Errorf("a %q line from ping-pong's client", env.Workload)
		}
		if env.Kind != workload.KindInterval {
			return smp, false, nil
		}
	}
	if err := json.Unmarshal(line, &smp); err != nil {
		return smp, false, err
	}
	if smp.Workload != pingpong.Descriptor.Name() {
		return smp, false, fmt.Errorf("a line of workload %q, not a ping-pong sample", smp.Workload)
	}
	return smp, true, nil
}

// waitReady polls ping's /ping/4 from the siege host until pong answers
// through ping: the whole path works.
func (p *pingPong) waitReady(ctx context.Context, e *env) error {
	siege, err := e.lab.Host("siege")
	if err != nil {
		return err
	}
	ping, err := e.lab.Endpoint("ping")
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DialContext: namespace.Dialer(siege.NS), DisableKeepAlives: true}}
	url := "http://" + ping.External + "/ping/4"
	var last error
	answered := false // ping answered, but not the protocol
	err = poll.Until(ctx, 15*time.Second, 50*time.Millisecond, func() (bool, error) {
		if err := e.check(); err != nil {
			return false, err
		}
		if l, ok := e.remote(); ok {
			// One request from the siege host's pod, as siege will send.
			okCount := 0
			one := workload.SweepSettings{Repetitions: 1, Concurrency: 1, Timeout: 2 * time.Second}
			err := p.siegeThrough(ctx, l, siege, ping, []int{4}, one, func(s record.Sample) {
				if s.OK() {
					okCount++
				} else {
					last = fmt.Errorf("GET %s/mping/4: %d %s", ping.External, s.Code, s.Error)
				}
			})
			if err != nil {
				last = err
			}
			return okCount == 1, nil
		}
		resp, err := client.Get(url)
		if err != nil {
			last = err
			return false, nil
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		last = fmt.Errorf("GET %s: %d %q", url, resp.StatusCode, b)
		if resp.StatusCode == 200 && string(b) != "pong" {
			answered = true
			return false, p.notProtocol("ping", url, b, `4 bytes "pong"`)
		}
		return resp.StatusCode == 200, nil
	})
	timedOut := errors.Is(err, poll.ErrTimeout)
	if timedOut {
		err = fmt.Errorf("ping and pong did not answer within 15s: %v", last)
	}
	if _, ok := e.remote(); ok || p.s.PingPong.Servers == nil || !(err == nil || timedOut || answered) {
		return err // cnperf's servers, or a server that exited
	}
	// Other implementations: ask each server itself, so that a message
	// names the one that breaks the protocol.
	pong, perr := e.lab.Endpoint("pong")
	if perr != nil {
		return perr
	}
	if perr := p.checkProtocol(ctx, client, ping.External, pong.External); perr != nil {
		return perr
	}
	return err
}
