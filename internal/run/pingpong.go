package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netnsutil"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

// pingPongTopology is ping-pong's lab: siege, the client outside the
// cluster, on a host of its own without endpoints; ping and pong each in an
// endpoint on a host of their own.
var pingPongTopology = lab.Topology{Hosts: []lab.HostSpec{
	{Name: "siege"},
	{Name: "ping", Endpoints: []lab.EndpointSpec{{Role: "ping"}}},
	{Name: "pong", Endpoints: []lab.EndpointSpec{{Role: "pong"}}},
}}

// pingPong is the HTTP ping-pong benchmark: siege outside the cluster
// sends requests to ping, which asks pong for the message; a unit is a chunk
// of the size plan.
type pingPong struct {
	s     spec.Spec
	sizes []int
}

func newPingPong(s spec.Spec) *pingPong {
	return &pingPong{s: s, sizes: s.PingPong.Plan().Sizes()}
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

// start starts pong and ping and waits until the whole path answers.
func (p *pingPong) start(ctx context.Context, e *env, exe, logs string) error {
	pong, err := e.lab.Endpoint("pong")
	if err != nil {
		return err
	}
	ping, err := e.lab.Endpoint("ping")
	if err != nil {
		return err
	}
	pp := p.s.PingPong
	if err := e.startServer("pong", pong, []string{exe, "serve", "pong", "--listen", pong.Listen, "--max-size", strconv.Itoa(pp.MaxBody)}, logs); err != nil {
		return err
	}
	if err := e.startServer("ping", ping, []string{exe, "serve", "ping", "--listen", ping.Listen, "--pong", "http://" + pong.Internal,
		"--retries", strconv.Itoa(pp.Retries), "--timeout", pp.Timeout.String()}, logs); err != nil {
		return err
	}
	return p.waitReady(ctx, e)
}

// runCell sends one chunk of sizes, every repetition, through siege.
func (p *pingPong) runCell(ctx context.Context, e *env, chunk int, cell *record.Cell, app *appender) error {
	siege, err := e.lab.Host("siege")
	if err != nil {
		return err
	}
	ping, err := e.lab.Endpoint("ping")
	if err != nil {
		return err
	}
	pp := p.s.PingPong
	reqs := pingpong.Requests(p.chunk(chunk), pp.Repetitions)
	mode := e.key
	return pingpong.Siege(ctx, pingpong.SiegeConfig{
		Target:      "http://" + ping.External,
		Concurrency: pp.Concurrency,
		Timeout:     pp.Timeout,
		Dial:        netnsutil.Dialer(siege.NS),
	}, reqs, func(smp pingpong.Sample) {
		smp.Mode, smp.Labels, smp.Cell = mode, p.s.Labels, cell.Index
		cell.Samples++
		if !smp.OK() {
			cell.Failed++
		} else {
			app.bytes[envKey(e.key, e.instance)] += int64(smp.Length)
		}
		app.add(smp, !smp.OK())
	})
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
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DialContext: netnsutil.Dialer(siege.NS), DisableKeepAlives: true}}
	url := "http://" + ping.External + "/ping/4"
	var last error
	err = poll.Until(ctx, 15*time.Second, 50*time.Millisecond, func() (bool, error) {
		if err := e.check(); err != nil {
			return false, err
		}
		resp, err := client.Get(url)
		if err != nil {
			last = err
			return false, nil
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = fmt.Errorf("GET %s: %d %q", url, resp.StatusCode, b)
		return resp.StatusCode == 200 && string(b) == "pong", nil
	})
	if errors.Is(err, poll.ErrTimeout) {
		return fmt.Errorf("ping and pong did not answer within 15s: %v", last)
	}
	return err
}
