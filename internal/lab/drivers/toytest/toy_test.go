package toytest_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/drivers/toytest"
	"github.com/cnperf/cnperf/internal/lab/labtest"
	"github.com/cnperf/cnperf/internal/run"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestMain removes the cnperf binary the tests built (testutil.Binary).
func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// TestToyDriverRunsWorkloads: a driver is its package plus one registry
// line. The toy's, appended to the binary's drivers, runs a socket test
// and ping-pong through run.Run as any driver does, and leaves nothing.
func TestToyDriverRunsWorkloads(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the toy driver makes network namespaces")
	}
	cat := drivers.Catalog(toytest.Driver{}) // the registry line
	for _, tc := range []struct{ name, yaml string }{
		{"stream", `name: toy-stream
driver: toy
modes: [bare]
reference: bare
` + runtest.ShortStream},
		{"pingpong", `name: toy-pingpong
driver: toy
modes: [bare]
reference: bare
` + runtest.SmallPingPong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := runtest.Run(t, cat, tc.name, tc.yaml)
			if len(res.Meta.Modes) != 1 || res.Meta.Modes[0].Driver != toytest.Name {
				t.Errorf("modes %+v, want bare on the toy driver", res.Meta.Modes)
			}
		})
	}
}

// TestDriverRecipeWithoutRoot is the recipe where no namespace can be
// made: a driver whose labs are in memory (labtest.Driver, its hosts at
// loopback addresses), added with its one line, runs the same stream test
// and ping-pong through run.Run. The runner asks it for a lab per
// instance with the workload's hosts, shifts the second lab's ports as its
// capability asks (its labs share one stack), starts each server on its
// role's endpoint and each client on the client host against the server's
// address, and removes every lab it asked for.
func TestDriverRecipeWithoutRoot(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		hosts      []string          // the topology Up gets
		servers    map[string]string // server role: endpoint
		client     string            // the host every client runs on
		target     string            // the endpoint clients name
	}{
		{"stream", "name: lo-stream\ndriver: loopback\nmodes: [bare]\ninstances: 2\n" + runtest.ShortStream,
			[]string{"client", "server"}, map[string]string{"stream-server": "server"}, "client", "server"},
		{"pingpong", "name: lo-pingpong\ndriver: loopback\nmodes: [bare]\ninstances: 2\n" + runtest.SmallPingPong,
			[]string{"siege", "ping", "pong"}, map[string]string{"pong": "pong", "ping": "ping"}, "siege", "ping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &labtest.Driver{}
			res, _ := runtest.Run(t, drivers.Catalog(d), tc.name, tc.yaml) // the registry line
			if len(res.Meta.Modes) != 2 || res.Meta.Modes[1].Driver != labtest.Name {
				t.Errorf("modes %+v, want two instances of bare on the %s driver", res.Meta.Modes, labtest.Name)
			}
			log := d.Log()
			if len(log.Ups) != 2 || !slices.Equal(log.Downs, []string{log.Ups[0].Name, log.Ups[1].Name}) &&
				!slices.Equal(log.Downs, []string{log.Ups[1].Name, log.Ups[0].Name}) {
				t.Fatalf("up %d labs, down %v: want both removed", len(log.Ups), log.Downs)
			}
			if shift := log.Ups[1].Port - log.Ups[0].Port; shift <= 0 {
				t.Errorf("ports %d and %d: want the second lab's shifted on the shared stack", log.Ups[0].Port, log.Ups[1].Port)
			}
			clients := 0
			for _, cfg := range log.Ups {
				var hosts []string
				for _, h := range cfg.Topology.Hosts {
					hosts = append(hosts, h.Name)
				}
				if !slices.Equal(hosts, tc.hosts) || cfg.Mode.Name() != "bare" || cfg.Exe == "" {
					t.Errorf("lab %s: hosts %v, mode %s, exe %q; want %v, bare, the binary", cfg.Name, hosts, cfg.Mode.Name(), cfg.Exe, tc.hosts)
				}
				clients += checkWiring(t, cfg, log.Runtimes[cfg.Name], tc.servers, tc.client, tc.target)
			}
			if clients == 0 {
				t.Error("no client started")
			}
		})
	}
}

// checkWiring: each server ran on its role's endpoint listening where the
// endpoint does, and each client on the client host named the target
// endpoint's address. It returns how many clients ran.
func checkWiring(t *testing.T, cfg lab.Config, rt *labtest.Runtime, servers map[string]string, client, target string) int {
	t.Helper()
	started := map[string]bool{}
	var targetAddr string
	servs, clients := rt.Started()
	for _, s := range servs {
		started[s.Name] = true
		if s.Endpoint.Role != servers[s.Name] || s.Args[0] != cfg.Exe || !slices.Contains(s.Args, s.Endpoint.Listen) {
			t.Errorf("lab %s: server %s on %s as %q: want it on %s listening at %s", cfg.Name, s.Name, s.Endpoint.Role, s.Args, servers[s.Name], s.Endpoint.Listen)
		}
		if s.Endpoint.Role == target {
			targetAddr = s.Endpoint.Internal
		}
	}
	if len(started) != len(servers) {
		t.Errorf("lab %s: servers %v, want %v", cfg.Name, started, servers)
	}
	for _, c := range clients {
		if c.Endpoint.Host != client || targetAddr == "" || !strings.Contains(strings.Join(c.Args, " "), targetAddr) {
			t.Errorf("lab %s: client %s on %s as %q: want it on %s naming %s", cfg.Name, c.Name, c.Endpoint.Host, c.Args, client, targetAddr)
		}
	}
	return len(clients)
}

// TestToyDriverIsRefusedWhereItCannot: what the toy cannot build is
// refused in the spec's words before anything is built.
func TestToyDriverIsRefusedWhereItCannot(t *testing.T) {
	cat := drivers.Catalog(toytest.Driver{})
	s, err := spec.Parse(strings.NewReader("name: toy\ndriver: toy\nmodes: [bare, overlay]\nreference: bare\n"), "toy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.NewPlan(run.Options{Spec: s, Lab: cat})
	if err == nil || !strings.Contains(err.Error(), "modes[1]: overlay cannot be built on the toy driver (it builds bare)") {
		t.Errorf("Check = %v, want overlay refused on the toy driver", err)
	}
	// Without the registry line the toy is no driver.
	_, err = run.NewPlan(run.Options{Spec: s, Lab: drivers.Catalog()})
	if err == nil || !strings.Contains(err.Error(), `driver "toy": unknown`) {
		t.Errorf("Check without the toy = %v, want the driver unknown", err)
	}
}
