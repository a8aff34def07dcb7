package run

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
)

// socketCells runs a spec's socket tests over cells: the servers run for
// the whole run in the server's container; each cell (one repetition of
// one case) starts the client (the same `cnperf stream|rr|jitter|datagram
// --json` people run) in the client's container, stores every envelope
// line it prints and what the cell cost both sides.
type socketCells struct {
	s     spec.Spec
	cases []workload.Case
	plan  []socketUnit
	kinds []workload.Server // the servers the tests need, each role once
}

// socketUnit is one repetition of one case.
type socketUnit struct {
	c   workload.Case
	rep int
}

func newSocketCells(s spec.Spec, cases []workload.Case) *socketCells {
	t := &socketCells{s: s, cases: cases}
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
			t.kinds = append(t.kinds, srv)
		}
	}
	// A probe under load (rr's under_load) needs the load's server too,
	// in the same server containers.
	if srv, ok := workload.LoadServer(cases); ok && !seen[srv.Role] {
		t.kinds = append(t.kinds, srv)
	}
	return t
}

// topology is the lab the tests run on: without a placement, a container
// on each of two hosts, client to server, as iperf or netperf between two
// containers on two hosts; with one, its server and client containers, on
// one host or apart; over a chain, its hosts in a line.
func (t *socketCells) topology() lab.Topology {
	if t.s.Chain != nil {
		return chainTopology(t.s.Chain.Hosts)
	}
	servers, clients := []string{"server"}, []string{"client"}
	if t.s.Placement != nil {
		p := t.s.Placed()
		servers, clients = roles("server", p.Servers), roles("client", p.Clients)
		if p.Hosts == spec.SameHost {
			return lab.OneHost("host", append(servers, clients...)...)
		}
	}
	return lab.Topology{Hosts: slices.Concat(lab.OneHost("client", clients...).Hosts, lab.OneHost("server", servers...).Hosts)}
}

// roles names n containers of a placement: server1, server2...
func roles(base string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = base + strconv.Itoa(i+1)
	}
	return out
}

// serverRoles are the server containers the tests use, and fanIn how many
// clients the busiest server of any test serves at once.
func (t *socketCells) serverRoles() (used []string, fanIn int) {
	if t.s.Chain != nil {
		return chainServerRoles(t.s.Chain.Hosts), 1
	}
	if t.s.Placement == nil {
		return []string{"server"}, 1
	}
	p := t.s.Placed()
	n := 1
	for _, c := range t.cases {
		clients, servers := c.Test.ClientCount(p.Clients), c.Test.ServerCount(p.Clients)
		n = max(n, servers)
		fanIn = max(fanIn, (clients+servers-1)/servers*c.Test.ProcessCount())
	}
	return roles("server", n), fanIn
}

func (t *socketCells) labConfig() lab.Config {
	cfg := lab.Config{Topology: t.topology(), Port: t.kinds[0].Port, Disrupt: t.s.Disrupt}
	for _, srv := range t.kinds {
		for _, proto := range srv.Protocols {
			if srv.Port == cfg.Port && proto == "tcp" {
				continue // published as the lab's port
			}
			cfg.Publish = append(cfg.Publish, lab.Port{Number: srv.Port, Protocol: proto})
		}
		for _, p := range srv.More {
			cfg.Publish = append(cfg.Publish, lab.Port{Number: p.Number, Protocol: p.Protocol})
		}
	}
	return cfg
}

func (t *socketCells) units() int { return len(t.plan) }

// samples is 0: a test's records arrive in bursts (a jitter test's at
// its end), so the progress bar counts cells.
func (t *socketCells) samples() int { return 0 }

func (t *socketCells) describeCell(u int, cell *record.Cell) {
	cell.Case, cell.Rep = t.plan[u].c.Label, t.plan[u].rep
}

func (t *socketCells) describeRun(*record.Meta) {}

// servers are each server the tests need in every server container they
// use; each is up once it has bound its port.
func (t *socketCells) servers(e *env) ([]serverRun, error) {
	used, fanIn := t.serverRoles()
	var out []serverRun
	for _, role := range used {
		ep, err := e.lab.Endpoint(role)
		if err != nil {
			return nil, err
		}
		// Servers listen where the mode's endpoint does: inside a lab's
		// sealed namespaces 0.0.0.0 (only lab addresses exist there), in
		// this machine's own stack (an existing engine's bare and host
		// modes) loopback only. Never the servers' own default.
		listenHost, _, _ := net.SplitHostPort(ep.Listen)
		for _, srv := range t.kinds {
			args := shiftPort(append([]string{e.exe}, srv.Args...), "--listen", e.shift+ep.PortShift)
			if listenHost != "" {
				for i := range args {
					if i > 0 && args[i-1] == "--listen" && strings.HasPrefix(args[i], ":") {
						args[i] = net.JoinHostPort(listenHost, args[i][1:]) // [::]:PORT on a lab with IPv6
					}
				}
			}
			if fanIn > 1 && srv.Concurrent != "" {
				args = append(args, srv.Concurrent, strconv.Itoa(fanIn))
			}
			out = append(out, serverRun{name: t.serverName(srv.Role, role), ep: ep, args: args,
				port: srv.Port + e.shift + ep.PortShift, protocols: srv.Protocols})
		}
	}
	return out, nil
}

// ready: a bound port is enough.
func (t *socketCells) ready(context.Context, *env) error { return nil }

// serverName names a server process (and its cgroup and log): its role,
// and with servers in several containers (a placement, a chain) the
// container it runs in.
func (t *socketCells) serverName(server, container string) string {
	if t.s.Placement == nil && t.s.Chain == nil {
		return server
	}
	return server + "-" + container
}

// placedClient is one client process of a test: in which container,
// against which server container, and its tags on what it prints.
type placedClient struct {
	name           string // process (cgroup) name
	client, server lab.Endpoint
	tagged         bool // a fan-out client: its records name it
	process        int
}

// clients lists a case's client processes: one, from the client to the
// server; with a placement, every client container the test uses, each
// against server i mod servers, Processes times.
func (t *socketCells) clients(e *env, c workload.Case) ([]placedClient, error) {
	n, servers, k, tagged := 1, 1, 1, t.s.Placement != nil
	if tagged {
		p := t.s.Placed()
		n, servers, k = c.Test.ClientCount(p.Clients), c.Test.ServerCount(p.Clients), c.Test.ProcessCount()
	}
	var out []placedClient
	for i := range n {
		client, server := "client", "server"
		var err error
		switch {
		case t.s.Chain != nil:
			client, server, err = chainEnds(c)
		case tagged:
			client, server = "client"+strconv.Itoa(i+1), "server"+strconv.Itoa(i%servers+1)
		}
		if err != nil {
			return nil, err
		}
		cep, err := e.lab.Endpoint(client)
		if err != nil {
			return nil, err
		}
		sep, err := e.lab.Endpoint(server)
		if err != nil {
			return nil, err
		}
		for j := range k {
			pc := placedClient{name: "client", client: cep, server: sep, tagged: tagged, process: j}
			if tagged {
				pc.name = fmt.Sprintf("%s-%d", cep.Role, j)
			}
			out = append(out, pc)
		}
	}
	return out, nil
}

// cell runs the clients of one repetition of a case, all at once: each
// envelope line they print is stored whole (record.Wrap), and the cost
// line charges the clients and the servers they use.
func (t *socketCells) cell(e *env, u int, cell *record.Cell, app *appender) (cellRun, error) {
	unit := t.plan[u]
	runs, err := t.clients(e, unit.c)
	if err != nil {
		return cellRun{}, err
	}
	c := unit.c
	if c.FitsMTU() {
		host, _, err := net.SplitHostPort(runs[0].server.Internal)
		if err != nil {
			return cellRun{}, fmt.Errorf("server endpoint %q: %w", runs[0].server.Internal, err)
		}
		mtu, err := pathMTU(runs[0].client.NS, host)
		if err != nil {
			return cellRun{}, fmt.Errorf("path MTU from the client to %s: %w", host, err)
		}
		c = c.FitTo(mtu)
	}
	cr := cellRun{log: "client", cost: record.Cost{Test: c.Test.Workload, Case: c.Label, Rep: unit.rep},
		conntrack: workload.Has(c.Workload(), workload.ConnState)}
	// A test that runs far past its planned time is stopped, not waited on.
	cr.limit = c.Test.Planned() + 30*time.Second
	if c.Test.Planned() == 0 {
		cr.limit = 10*time.Minute + 30*time.Second // until a count: bounded all the same
	}
	for _, r := range runs {
		if name := t.serverName(c.Workload().Server().Role, r.server.Role); !slices.Contains(cr.servers, name) {
			cr.servers = append(cr.servers, name)
		}
		clients, err := t.placedRuns(e, c, r, unit.rep, cell, app)
		if err != nil {
			return cellRun{}, err
		}
		cr.clients = append(cr.clients, clients...)
	}
	return cr, nil
}

// placedRuns are r's clients of case c in cell (repetition rep): the
// case's, and beside a probe under load (a case's LoadCase) its load,
// from the same container to the same server container, its lines stored
// as KindLoad records of the probe's case.
func (t *socketCells) placedRuns(e *env, c workload.Case, r placedClient, rep int, cell *record.Cell, app *appender) ([]clientRun, error) {
	host, _, err := net.SplitHostPort(r.server.Internal)
	if err != nil {
		return nil, fmt.Errorf("server endpoint %q: %w", r.server.Internal, err)
	}
	// store stamps a line of r's as the cell's (with a placement, naming
	// its client, process and server) and stores it.
	store := func(rec record.Record) {
		rec.Mode, rec.Labels, rec.Cell, rec.Rep = e.key, t.s.Labels, cell.Index, rep
		if r.tagged {
			rec.Client, rec.Process, rec.Server = r.client.Role, r.process, r.server.Role
		}
		app.add(rec, false)
	}
	line := func(line []byte) error {
		rec, err := record.Wrap(c, line)
		if err != nil {
			return err
		}
		if rec.Kind == record.KindTotal {
			if tot, err := c.Workload().Total(rec.Data); err == nil {
				app.bytes[envKey(e.key, e.instance)] += tot.Moved
			}
		}
		cell.Samples++
		store(rec)
		return nil
	}
	argv := func(c workload.Case) []string {
		return shiftPort(append([]string{e.exe}, c.ClientArgs(host)...), "--server", e.shift+r.server.PortShift)
	}
	out := []clientRun{{name: r.name, ep: r.client, args: argv(c), line: line}}
	if lc, ok := c.LoadCase(); ok {
		out = append(out, clientRun{name: r.name + "-load", ep: r.client, args: argv(lc), line: func(line []byte) error {
			rec, err := record.WrapLoad(c, lc, line)
			if err == nil {
				store(rec)
			}
			return err
		}})
	}
	return out, nil
}

// pathMTU is the MTU of the interface the client's route to host leaves
// by, as sizes are fitted to it (workload.FitMTU: less the IPv6 header's
// extra bytes over IPv6): a connected UDP socket picks the route and sends
// nothing.
func pathMTU(ns, host string) (int, error) {
	var mtu int
	err := namespace.Do(ns, func() error {
		c, err := net.Dial("udp", net.JoinHostPort(host, "9"))
		if err != nil {
			return err
		}
		defer c.Close()
		mtu = workload.FitMTU(c.LocalAddr()) // less the IPv6 header's extra bytes over IPv6
		return nil
	})
	if err == nil && mtu == 0 {
		err = errors.New("no interface holds the socket's address")
	}
	return mtu, err
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
