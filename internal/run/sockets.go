package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netnsutil"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/udp"
)

// socketTopology is a socket lab: a container on each of two hosts, client
// to server, as iperf or netperf between two containers on two hosts.
var socketTopology = lab.Topology{Hosts: []lab.HostSpec{
	{Name: "client", Endpoints: []lab.EndpointSpec{{Role: "client"}}},
	{Name: "server", Endpoints: []lab.EndpointSpec{{Role: "server"}}},
}}

// socketTests runs a spec's socket tests: the servers run for the whole run
// in the server's container; each cell starts the client (the same `cnperf
// stream|rr|jitter|datagram --json` people run) in the client's container,
// stores every line it prints and what the cell cost both sides.
type socketTests struct {
	s       spec.Spec
	cases   []workload.Case
	plan    []socketUnit
	servers []workload.Server
	exe     string
	logs    string
}

// socketUnit is one repetition of one case.
type socketUnit struct {
	c   workload.Case
	rep int
}

func newSocketTests(s spec.Spec, cases []workload.Case) *socketTests {
	t := &socketTests{s: s, cases: cases}
	// Repetition r of every case runs before repetition r+1, so the
	// repetitions spread over the run like ping-pong's chunks.
	for r := 0; ; r++ {
		added := false
		for _, c := range cases {
			if r < max(c.Test.Repetitions, 1) {
				t.plan = append(t.plan, socketUnit{c: c, rep: r})
				added = true
			}
		}
		if !added {
			break
		}
	}
	seen := map[string]bool{}
	for _, c := range cases {
		srv := c.Workload().Server()
		if !seen[srv.Role] {
			seen[srv.Role] = true
			t.servers = append(t.servers, srv)
		}
	}
	return t
}

func (t *socketTests) labConfig() lab.Config {
	cfg := lab.Config{Topology: socketTopology, Port: t.servers[0].Port}
	for _, srv := range t.servers {
		for _, proto := range srv.Protocols {
			if srv.Port == cfg.Port && proto == "tcp" {
				continue // published as the lab's port
			}
			cfg.Publish = append(cfg.Publish, lab.Port{Number: srv.Port, Protocol: proto})
		}
	}
	return cfg
}

func (t *socketTests) units() int { return len(t.plan) }

// expectedSamples is 0: a test's records arrive in bursts (a jitter test's
// at its end), so the progress bar counts cells.
func (t *socketTests) expectedSamples(int) int { return 0 }

func (t *socketTests) describeCell(u int, cell *record.Cell) {
	cell.Case, cell.Rep = t.plan[u].c.Label, t.plan[u].rep
}

// start starts each server the tests need in the server's container and
// waits until each has bound its port.
func (t *socketTests) start(ctx context.Context, e *env, exe, logs string) error {
	t.exe, t.logs = exe, logs
	ep, err := e.lab.Endpoint("server")
	if err != nil {
		return err
	}
	// Servers listen where the mode's endpoint does: inside a lab's sealed
	// namespaces 0.0.0.0 (only lab addresses exist there), in this
	// machine's own stack (an existing engine's bare and host modes)
	// loopback only. Never the servers' own default.
	listenHost, _, _ := net.SplitHostPort(ep.Listen)
	for _, srv := range t.servers {
		args := shiftPort(append([]string{exe}, srv.Args...), "--listen", e.shift)
		if listenHost != "" {
			for i := range args {
				if i > 0 && args[i-1] == "--listen" && strings.HasPrefix(args[i], ":") {
					args[i] = listenHost + args[i]
				}
			}
		}
		if err := e.startServer(srv.Role, ep, args, logs); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, srv := range t.servers {
		err := poll.Until(ctx, time.Until(deadline), 20*time.Millisecond, func() (bool, error) {
			if err := e.check(); err != nil {
				return false, err
			}
			return netnsutil.Bound(e.procs[srv.Role].PID(), srv.Port+e.shift, srv.Protocols), nil
		})
		if errors.Is(err, poll.ErrTimeout) {
			return fmt.Errorf("%s did not bind port %d within 10s; see logs/%s", srv.Role, srv.Port, e.logName(srv.Role))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// runCell runs the client of one repetition of a case and stores its lines
// and the cell's cost. A client that fails marks the cell failed with its
// reason; the run goes on.
func (t *socketTests) runCell(ctx context.Context, e *env, u int, cell *record.Cell, app *appender) error {
	unit := t.plan[u]
	c := unit.c
	clientEP, err := e.lab.Endpoint("client")
	if err != nil {
		return err
	}
	serverEP, err := e.lab.Endpoint("server")
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(serverEP.Internal)
	if err != nil {
		return fmt.Errorf("server endpoint %q: %w", serverEP.Internal, err)
	}
	if c.Test.FitMTU {
		mtu, err := pathMTU(clientEP.NS, host)
		if err != nil {
			return fmt.Errorf("path MTU from the client to %s: %w", host, err)
		}
		c = c.FitTo(mtu)
	}
	w := c.Workload()
	server := e.procs[w.Server().Role]
	serverBefore, _ := server.Usage()

	mode := e.key
	var mu sync.Mutex
	var badLine error
	out := &lineWriter{fn: func(line []byte) {
		mu.Lock()
		defer mu.Unlock()
		rec, err := record.Wrap(c, line)
		if err != nil {
			if badLine == nil {
				badLine = err
			}
			return
		}
		rec.Mode, rec.Labels, rec.Cell, rec.Rep = mode, t.s.Labels, cell.Index, unit.rep
		if rec.Kind == record.KindTotal {
			if tot, err := w.Total(rec.Data); err == nil {
				app.bytes[envKey(e.key, e.instance)] += tot.Moved
			}
		}
		cell.Samples++
		app.add(rec, false)
	}}
	logf, err := os.OpenFile(filepath.Join(t.logs, e.logName("client")), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := shiftPort(append([]string{t.exe}, c.ClientArgs(host)...), "--server", e.shift)
	fmt.Fprintf(logf, "# cell %d: %s\n", cell.Index, strings.Join(args[1:], " "))
	var stderr bytes.Buffer
	client, err := e.startClient(clientEP, args, out, io.MultiWriter(logf, &stderr))
	if err != nil {
		return err
	}
	// A test that runs far past its planned time is stopped, not waited on.
	limit := c.Test.Planned() + 30*time.Second
	if c.Test.Planned() == 0 {
		limit = 10*time.Minute + 30*time.Second // until a count: bounded all the same
	}
	var stopReason string
	select {
	case <-client.Done():
	case <-ctx.Done():
		stopReason = "interrupted"
	case <-time.After(limit):
		stopReason = fmt.Sprintf("client still running %s after it started: stopped", limit)
	}
	if stopReason != "" {
		_ = client.Stop(5 * time.Second) // SIGTERM first: the client prints what it has
	}
	_, exitErr := client.Exited()
	cu, _ := client.Usage()
	_ = client.Stop(0)
	out.flush()
	su, _ := server.Usage()
	su.CPUSeconds -= serverBefore.CPUSeconds
	su.UserSeconds -= serverBefore.UserSeconds
	su.SystemSeconds -= serverBefore.SystemSeconds
	app.add(record.Cost{Workload: "cost", Test: c.Test.Workload, Mode: mode, Labels: t.s.Labels, Cell: cell.Index, Case: c.Label, Rep: unit.rep,
		Seconds: time.Since(cell.Start).Seconds(), Client: cu, Server: su}, false)

	mu.Lock()
	defer mu.Unlock()
	switch {
	case stopReason == "interrupted":
		return ctx.Err()
	case stopReason != "":
		cell.Error = stopReason
	case exitErr != nil:
		cell.Error = fmt.Sprintf("client: %v: %s", exitErr, lastLine(stderr.String()))
	case badLine != nil:
		cell.Error = badLine.Error()
	}
	if cell.Error != "" {
		cell.Failed++
	}
	return nil
}

// pathMTU is the MTU of the interface the client's route to host leaves
// by: a connected UDP socket picks the route and sends nothing.
func pathMTU(ns, host string) (int, error) {
	var mtu int
	err := netnsutil.Do(ns, func() error {
		c, err := net.Dial("udp", net.JoinHostPort(host, "9"))
		if err != nil {
			return err
		}
		defer c.Close()
		mtu = udp.LocalMTU(c.LocalAddr())
		return nil
	})
	if err == nil && mtu == 0 {
		err = errors.New("no interface holds the socket's address")
	}
	return mtu, err
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// lineWriter calls fn with every complete line written to it.
type lineWriter struct {
	buf []byte
	fn  func([]byte)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		if line := bytes.TrimSpace(w.buf[:i]); len(line) > 0 {
			w.fn(line)
		}
		w.buf = w.buf[i+1:]
	}
}

// flush passes on a last line without a newline.
func (w *lineWriter) flush() {
	if line := bytes.TrimSpace(w.buf); len(line) > 0 {
		w.fn(line)
	}
	w.buf = nil
}

// shiftPort adds shift to the port of the value after flag (HOST:PORT).
func shiftPort(args []string, flag string, shift int) []string {
	if shift == 0 {
		return args
	}
	for i := 1; i < len(args); i++ {
		if args[i-1] != flag {
			continue
		}
		h, p, err := net.SplitHostPort(args[i])
		if n, perr := strconv.Atoi(p); err == nil && perr == nil {
			args[i] = net.JoinHostPort(h, strconv.Itoa(n+shift))
		}
	}
	return args
}
