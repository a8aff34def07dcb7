package run

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/spec"
)

// TestChainPresetPlansEveryTargetAndSegment: seed002-hops runs each test
// from h1 to each of h2..h6 and each rr test over segments 2..5, each
// case between the containers it names, on six hosts in a line.
func TestChainPresetPlansEveryTargetAndSegment(t *testing.T) {
	s, err := spec.Preset("seed002-hops")
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := check(drivers.Catalog(), s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := w.parts[0].(*socketCells)
	var labels []string
	for _, c := range st.cases {
		labels = append(labels, c.Label)
	}
	if len(labels) != 4*5+2*4 {
		t.Fatalf("%d cases, want 28: %v", len(labels), labels)
	}
	for _, want := range []string{"latency-udp hops=1", "latency-udp hops=5", "latency-udp segment=2", "latency-tcp segment=5", "tcp hops=3", "udp hops=5"} {
		if !slices.Contains(labels, want) {
			t.Errorf("no case %q in %v", want, labels)
		}
	}
	if slices.Contains(labels, "tcp segment=2") || slices.Contains(labels, "latency-udp segment=1") {
		t.Errorf("segments for stream, or segment 1 (= hops=1) planned: %v", labels)
	}
	topo := st.labConfig().Topology
	if !topo.Chain || len(topo.Hosts) != 6 || topo.Hosts[0].Endpoints[0].Role != "client" || topo.Hosts[5].Endpoints[0].Role != "server6" {
		t.Fatalf("topology %+v", topo)
	}
	if used, fanIn := st.serverRoles(); !slices.Equal(used, []string{"server2", "server3", "server4", "server5", "server6"}) || fanIn != 1 {
		t.Errorf("servers %v, fan-in %d", used, fanIn)
	}
	for label, want := range map[string][2]string{"latency-udp hops=5": {"client", "server6"}, "tcp hops=1": {"client", "server2"},
		"latency-tcp segment=3": {"server3", "server4"}} {
		i := slices.Index(labels, label)
		client, server, err := chainEnds(st.cases[i])
		if err != nil || client != want[0] || server != want[1] {
			t.Errorf("%s runs %s to %s (%v), want %v", label, client, server, err, want)
		}
	}
	if len(st.plan) != 28*3 {
		t.Errorf("%d units, want 84", len(st.plan))
	}
}

// TestChainRefused: bad chains stop the run in one line naming the field.
func TestChainRefused(t *testing.T) {
	base, err := spec.Preset("seed002-hops")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*spec.Spec)
		want string
	}{
		{func(s *spec.Spec) { s.Chain.Hosts = 1 }, "chain.hosts 1: want 2 to 16"},
		{func(s *spec.Spec) { s.Chain.Hosts = 17 }, "chain.hosts 17: want 2 to 16"},
		{func(s *spec.Spec) { s.Modes = []string{"bare", "macvlan"} }, "modes[1]: mode macvlan cannot run on a chain"},
		{func(s *spec.Spec) { s.Placement = &spec.Placement{Servers: 2} }, "chain: with placement"},
		{func(s *spec.Spec) { s.Tests = nil }, "chain: needs socket tests"},
		{func(s *spec.Spec) { s.Tests[2].Clients = 2 }, "tests[2]: clients, servers, pairs or processes"},
		{func(s *spec.Spec) { s.Driver = "docker" }, "chain: driver docker"},
	} {
		s := base
		ch := *base.Chain
		s.Chain = &ch
		s.Tests = slices.Clone(base.Tests)
		s.Modes = slices.Clone(base.Modes)
		s.Claims = nil // the preset's claims name its modes and tests, which the edits change
		c.edit(&s)
		_, err := NewPlan(Options{Spec: s, Lab: drivers.Catalog()})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v, want one line with %q", err, c.want)
		}
	}
}
