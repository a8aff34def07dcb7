package toytest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/modes/toytest"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/run"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestMain removes the cnperf binary the tests built (testutil.Binary).
func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// catalog is the binary's catalogue with the toy mode added: the one
// registry line a mode needs (in the binary, a line in modes.All).
func catalog() lab.Catalog {
	cat := drivers.Catalog()
	cat.Modes = append(cat.Modes, toytest.Mode{})
	return cat
}

// TestToyModeRunsWorkloads: a mode is its package plus one registry line.
// The toy runs a stream test beside bare and ping-pong through run.Run
// like any mode, its shaping shows in the figures, and nothing is left.
func TestToyModeRunsWorkloads(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the netns driver makes network namespaces")
	}
	cat := catalog()
	for _, tc := range []struct{ name, yaml string }{
		{"stream", `name: toymode-stream
modes: [bare, toy-shaped]
reference: bare
` + runtest.ShortStream},
		{"pingpong", `name: toymode-pingpong
modes: [toy-shaped]
reference: toy-shaped
` + runtest.SmallPingPong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, dir := runtest.Run(t, cat, tc.name, tc.yaml)
			if tc.name == "stream" {
				checkShaped(t, dir)
			}
		})
	}
}

// TestToyModeRecipeWithoutRoot is what of the recipe holds where no
// namespace can be made: the registry line makes the mode one a spec may
// name, on the driver whose interface it has (without the line it is
// unknown, in the spec's words), and its Build, given the hosts of a lab,
// first asks to shape each host's NIC to Rate: here the namespaces do not
// exist, so that step is refused, in words naming what it asked.
func TestToyModeRecipeWithoutRoot(t *testing.T) {
	s, err := spec.Parse(strings.NewReader("name: toy\nmodes: [bare, toy-shaped]\nreference: bare\n"+runtest.ShortStream), "toy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.NewPlan(run.Options{Spec: s, Lab: catalog()}); err != nil {
		t.Errorf("a spec with the toy mode: %v", err)
	}
	_, err = run.NewPlan(run.Options{Spec: s, Lab: drivers.Catalog()})
	if err == nil || !strings.Contains(err.Error(), `modes[1]: unknown mode "toy-shaped"`) {
		t.Errorf("without the registry line: %v, want the mode unknown", err)
	}

	name := fmt.Sprintf("toyplan%d", os.Getpid()) // a lab nobody has built
	topo := lab.ClientServers([]string{"client", "server"}, false)
	l := &lab.Lab{Lab: record.Lab{Name: name, Mode: toytest.Name, Publish: []lab.Port{{Number: 5201, Protocol: "tcp"}}, Topology: &topo}}
	for i, h := range topo.Hosts {
		l.Hosts = append(l.Hosts, lab.Host{Name: h.Name, Index: i + 1, NS: lab.NS(name, h.Name), Addr: lab.UnderlayIP(i + 1).String()})
		if namespace.Exists(l.Hosts[i].NS) {
			t.Fatalf("namespace %s exists: not this test's to shape", l.Hosts[i].NS)
		}
	}
	eps, err := toytest.Mode{}.Build(netns.NewBuild(l, lab.Config{Name: name, Mode: toytest.Mode{}, Topology: topo}))
	want := "shape server: tc qdisc replace dev eth0 root tbf rate " + toytest.Rate + " "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Build = %v, %v; want its first step refused: %q", eps, err, want)
	}
}

// checkShaped: the toy's stream stays under its NIC's 200 Mbit/s while
// bare's, on the same machine in the same run, does not.
func checkShaped(t *testing.T, dir string) {
	t.Helper()
	r, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sockets, _, err := r.Contents()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, rec := range sockets.Records {
		if rec.Kind != record.KindTotal {
			continue
		}
		var end struct {
			Received float64 `json:"receiver_bits_per_second"`
		}
		if err := json.Unmarshal(rec.Data, &end); err == nil && end.Received > 0 {
			got[rec.Mode] = end.Received
		}
	}
	if toy := got[toytest.Name]; toy == 0 || toy > 210e6 {
		t.Errorf("toy-shaped stream %.0f bit/s, want some and at most 200 Mbit/s (all: %v)", toy, got)
	}
	if got["bare"] < 400e6 {
		t.Errorf("bare stream %.0f bit/s beside the toy, want far above the toy's 200 Mbit/s (all: %v)", got["bare"], got)
	}
}
