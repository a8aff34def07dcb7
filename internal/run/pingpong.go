package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// pingPong runs the spec's size sweep (spec.Sweep, a workload.SizeSweep
// of the registry's: Kratzke's HTTP ping-pong, siege → ping → pong, or
// another) over cells: its client outside the servers' hosts sends
// requests to its target; a cell's unit is a chunk of the size plan. What
// it starts and runs is the workload descriptor's; the runner starts its
// servers and its client as it starts every workload's (startServers,
// runCell): the client is a process on its host printing envelope lines,
// each interval line one request's record.Sample.
type pingPong struct {
	s     spec.Spec
	w     workload.SizeSweep
	sizes []int
}

func newPingPong(s spec.Spec) *pingPong {
	return &pingPong{s: s, w: s.Sweep(), sizes: s.PingPong.Plan().Sizes()}
}

// settings are the spec's ping-pong section as the descriptor takes it.
func (p *pingPong) settings() workload.SweepSettings {
	pp := p.s.PingPong
	return workload.SweepSettings{MaxBody: pp.MaxBody, Retries: pp.Retries, Timeout: pp.Timeout, Repetitions: pp.Repetitions, Concurrency: pp.Concurrency}
}

// labConfig is the client on a host of its own without endpoints, each
// server in an endpoint on a host of its own, from the target's end (ping,
// then pong: the reverse of the order they start in); under a placement
// (spec.Placement, hosts apart) the servers are containers of one server
// host, so that a request from one to the next crosses containers of a
// host, as a socket lab's roles are placed.
func (p *pingPong) labConfig() lab.Config {
	hosts := []lab.HostSpec{{Name: p.w.Client()}}
	placed := lab.HostSpec{Name: "server"}
	srv := p.w.Servers(p.settings(), func(string) workload.SweepAddr { return workload.SweepAddr{} })
	for i := range srv {
		ep := lab.EndpointSpec{Role: srv[len(srv)-1-i].Role}
		hosts = append(hosts, lab.HostSpec{Name: ep.Role, Endpoints: []lab.EndpointSpec{ep}})
		placed.Endpoints = append(placed.Endpoints, ep)
	}
	if p.s.Placement != nil {
		hosts = append(hosts[:1], placed)
	}
	return lab.Config{Topology: lab.Topology{Hosts: hosts}, Port: p.s.PingPong.Port}
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

func (p *pingPong) samples() int { return len(p.sizes) * p.s.PingPong.Repetitions }

func (p *pingPong) describeCell(int, *record.Cell) {}

// describeRun: a size sweep's run says how many sizes its plan holds.
func (p *pingPong) describeRun(meta *record.Meta) { meta.Sizes = len(p.sizes) }

// servers are the descriptor's, in its order (pong, then ping in front
// of it), or the spec's own commands or images (pingpong.servers) in
// their place. Readiness is the probe's (ready), not a bound port: on
// engines of other machines no process of theirs is in sight.
func (p *pingPong) servers(e *env) ([]serverRun, error) {
	at := func(role string) workload.SweepAddr {
		ep, _ := e.lab.Endpoint(role) // a role the lab lacks fails below
		return workload.SweepAddr{Listen: ep.Listen, Internal: ep.Internal}
	}
	var out []serverRun
	for _, srv := range p.w.Servers(p.settings(), at) {
		ep, err := e.lab.Endpoint(srv.Role)
		if err != nil {
			return nil, fmt.Errorf("%s server: %w", srv.Role, err)
		}
		run := serverRun{name: srv.Role, ep: ep, args: append([]string{e.exe}, srv.Args...)}
		// pingpong.servers may name other implementations (servers.go).
		if argv, image, ok := p.ownServer(srv.Role, spec.ServerValues{Listen: ep.Listen, Pong: at("pong").Internal}); ok {
			run.args, run.image = argv, image
		}
		out = append(out, run)
	}
	return out, nil
}

// client is the sweep's client (siege) for sizes as a process on its host
// (a host of its own, without an endpoint), each interval line it prints
// handed to emit as the sample runs store, and its end line's TCP_INFO of
// its connections to end (if not nil).
func (p *pingPong) client(e *env, set workload.SweepSettings, sizes []int, emit func(record.Sample), end func(*tcpinfo.Stats, map[string]*tcpinfo.Stats)) (clientRun, error) {
	host, err := e.lab.Host(p.w.Client())
	if err != nil {
		return clientRun{}, err
	}
	target, err := e.lab.Endpoint(p.w.Target())
	if err != nil {
		return clientRun{}, err
	}
	return clientRun{
		name: p.w.Client(),
		ep:   lab.Endpoint{Role: p.w.Client(), Host: host.Name, NS: host.NS, Kube: host.Kube},
		args: append([]string{e.exe}, p.w.ClientArgs(set, target.External, sizes)...),
		line: func(line []byte) error {
			smp, ok, err := sampleLine(p.w.Name(), line)
			if err != nil {
				return fmt.Errorf("%s printed %.80q: %w", p.w.Client(), line, err)
			}
			if ok {
				emit(smp)
			} else if tcp, servers := endTCP(line); (tcp != nil || servers != nil) && end != nil {
				end(tcp, servers)
			}
			return nil
		},
	}, nil
}

// cell sends one chunk of sizes, every repetition, through the client;
// the cost line charges the client's process. Not the servers: their usage over the run
// is in run.json, and reading it per cell would cost more than a cell of
// a few hundred requests (an engine of another machine answers its stats
// in about a second).
func (p *pingPong) cell(e *env, chunk int, cell *record.Cell, app *appender) (cellRun, error) {
	set := p.settings()
	sizes := p.chunk(chunk)
	mode := e.key
	c, err := p.client(e, set, sizes, func(smp record.Sample) {
		smp.Mode, smp.Labels, smp.Cell = mode, p.s.Labels, cell.Index
		cell.Samples++
		if !smp.OK() {
			cell.Failed++
		} else {
			app.bytes[envKey(e.key, e.instance)] += int64(smp.Length)
		}
		app.add(smp, !smp.OK())
	}, func(tcp *tcpinfo.Stats, servers map[string]*tcpinfo.Stats) { cell.TCP, cell.ServerTCP = tcp, servers })
	if err != nil {
		return cellRun{}, err
	}
	// Every request ends within its timeout: a client past all of them
	// in a row has hung.
	limit := time.Duration(len(sizes)*set.Repetitions)*set.Timeout + 30*time.Second
	return cellRun{clients: []clientRun{c}, limit: limit, log: p.w.Client(),
		cost: record.Cost{Test: p.w.Name()}, span: true}, nil
}

// sampleLine reads one line the client of size sweep name printed: an
// envelope's interval line is a sample (its fields beside workload and
// kind), its start and end lines are not (ok false); a line without a
// kind is a bare sample, as siege's --format jsonl prints it. Either way
// the sample is stored as runs have always stored it: the record.Sample's
// own fields.
func sampleLine(name string, line []byte) (smp record.Sample, ok bool, err error) {
	if env, derr := workload.Decode(line); derr == nil {
		if env.Workload != name {
			return smp, false, fmt.Errorf("a %q line from %s's client", env.Workload, name)
		}
		if env.Kind != workload.KindInterval {
			return smp, false, nil
		}
	}
	if err := json.Unmarshal(line, &smp); err != nil {
		return smp, false, err
	}
	if smp.Workload != name {
		return smp, false, fmt.Errorf("a line of workload %q, not a %s sample", smp.Workload, name)
	}
	return smp, true, nil
}

// endTCP is the TCP_INFO a client's end line carries, its own
// connections' and the servers' by side, if the line is one and carries
// them. Sides are bounded: a line naming more than maxServerSides is not
// a sweep's.
func endTCP(line []byte) (*tcpinfo.Stats, map[string]*tcpinfo.Stats) {
	var end struct {
		Kind    string                    `json:"kind"`
		TCP     *tcpinfo.Stats            `json:"tcp_info"`
		Servers map[string]*tcpinfo.Stats `json:"server_tcp_info"`
	}
	if json.Unmarshal(line, &end) != nil || end.Kind != workload.KindEnd {
		return nil, nil
	}
	maps.DeleteFunc(end.Servers, func(_ string, v *tcpinfo.Stats) bool { return v == nil })
	if len(end.Servers) == 0 || len(end.Servers) > maxServerSides {
		end.Servers = nil
	}
	return end.TCP, end.Servers
}

// maxServerSides bounds the sides a cell records: siege names three.
const maxServerSides = 8

// readyWait is how long the servers get to answer.
const readyWait = 15 * time.Second

// ready waits until the servers answer one request of the descriptor's
// probe size (Probe), sent by the sweep's client from its host as the
// cells' are (the whole chain works). Where the runner can enter the
// client host, the spec's own servers are then asked for the rest of the
// protocol (checkProtocol), so that a message names the one that breaks
// it.
func (p *pingPong) ready(ctx context.Context, e *env) error {
	var last error
	good, answered := false, false // answered: whole, of the wrong length
	one := workload.SweepSettings{Repetitions: 1, Concurrency: 1, Timeout: 2 * time.Second}
	probe, err := p.client(e, one, []int{p.w.Probe()}, func(s record.Sample) {
		good = good || s.OK()
		if !s.OK() {
			answered = answered || s.Code == http.StatusOK
			last = fmt.Errorf("%d bytes to %s: %d %s", s.Size, p.w.Target(), s.Code, s.Error)
		}
	}, nil)
	if err != nil {
		return err
	}
	probe.name = p.w.Client() + "-probe"
	servers := p.w.Name() + "'s servers"
	own := p.s.PingPong.Servers != nil && !lab.IsRemote(e.lab) && probe.ep.NS != ""
	err = poll.Until(ctx, readyWait, 50*time.Millisecond, func() (bool, error) {
		if err := e.alive(); err != nil {
			return false, err
		}
		if err := e.runClient(ctx, probe); err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			last = err
		}
		if answered && own {
			return false, fmt.Errorf("%s answer, but not as the protocol says: %v", servers, last)
		}
		return good, nil
	})
	timedOut := errors.Is(err, poll.ErrTimeout)
	if timedOut {
		err = fmt.Errorf("%s did not answer within %s: %v", servers, readyWait, last)
	}
	if !own || !(err == nil || timedOut || answered) {
		return err // cnperf's servers, or a server that exited
	}
	if perr := p.checkProtocol(ctx, e, probe.ep.NS); perr != nil {
		return perr
	}
	return err
}
