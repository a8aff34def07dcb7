package run

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil"
)

// ipv6Variants runs every mode on an IPv6-only and a dual-stack lab.
const ipv6Variants = `
variants:
  - {ip_family: ipv6}
  - {ip_family: dual}
`

// checkIPv6Labs: run.json records each lab's family, its hosts' IPv6
// addresses and endpoints dialled at IPv6 (with the IPv4 twins on dual).
// On the IPv6-only lab no device but loopback has an IPv4 address (the
// lab's own test, netns.TestIPv6Modes), so its results crossed IPv6.
func checkIPv6Labs(t *testing.T, rd *record.Reader, series int) {
	t.Helper()
	var meta record.Meta
	if err := rd.Meta(&meta); err != nil {
		t.Fatal(err)
	}
	if len(meta.Modes) != series {
		t.Fatalf("%d labs, want %d", len(meta.Modes), series)
	}
	for _, m := range meta.Modes {
		l, fam := m.Lab, m.Conditions.Family()
		if l == nil || l.IPFamily != fam || len(l.Hosts) == 0 || len(l.Endpoints) == 0 {
			t.Fatalf("%s: lab %+v, want one of ip_family %s", m.Mode, l, fam)
		}
		for _, h := range l.Hosts {
			if !strings.HasPrefix(h.Addr6, "2001:2:") || (h.Addr == "") != (fam == "ipv6") {
				t.Errorf("%s: host %s at %q and %q", m.Mode, h.Name, h.Addr, h.Addr6)
			}
		}
		for _, e := range l.Endpoints {
			if !strings.HasPrefix(e.Internal, "[2001:2:") || (e.Internal4 != "") != (fam == "dual") {
				t.Errorf("%s: endpoint %s dialled at %s (IPv4 %q)", m.Mode, e.Role, e.Internal, e.Internal4)
			}
		}
	}
}

// TestEveryWorkloadOverIPv6: every socket workload (stream over TCP and
// UDP, rr tcp, udp fitted to the path and crr, rr under load, jitter,
// datagram, grid) and ping-pong (siege, ping and pong at URLs
// http://[v6]:port/) run through the runner on a bare IPv6-only and a dual
// lab: each socket case's total arrives for both, and every ping-pong
// sample is good.
func TestEveryWorkloadOverIPv6(t *testing.T) {
	testutil.RequireRoot(t)
	s, err := spec.Parse(strings.NewReader(`
name: ipv6
modes: [bare]
`+ipv6Variants+`
tests:
  - {workload: stream, duration: 1s}
  - {workload: stream, protocol: udp, rate: 50M, duration: 1s}
  - {workload: rr, duration: 1s}
  - {workload: rr, protocol: udp, fit_mtu: true, duration: 1s}
  - {workload: rr, protocol: crr, duration: 1s}
  - {workload: rr, under_load: 1, duration: 1s}
  - {workload: jitter, rate: 10M, duration: 1s}
  - {workload: datagram, rate: 50M, count: 2000}
  - {workload: grid, length: 100, duration: 1s}
pingpong:
  min_size: 1
  max_size: 20000
  coverage: 0.0005
  repetitions: 1
  concurrency: 1
  seed: 7
  chunk: 5
  retries: 3
  timeout: 10s
`), "ipv6.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := runSpec(t, s)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	rd, err := record.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	checkIPv6Labs(t, rd, 2)
	c, _, err := rd.Contents()
	if err != nil {
		t.Fatal(err)
	}
	totals := map[string]map[int]bool{}
	for _, r := range c.Records {
		if r.Kind == record.KindTotal {
			if totals[r.Mode] == nil {
				totals[r.Mode] = map[int]bool{}
			}
			totals[r.Mode][r.Test] = true
		}
	}
	if len(totals) != 2 {
		t.Fatalf("totals by series: %v, want the ipv6 and dual labs'", totals)
	}
	for series, byTest := range totals {
		for i := range s.Tests {
			if !byTest[i] {
				t.Errorf("%s: no total for test %d (%s)", series, i, s.Tests[i].Workload)
			}
		}
	}
	samples := c.PingPong
	want := len(s.PingPong.Plan().Sizes()) * s.PingPong.Repetitions * 2
	t.Logf("%d samples over %d sizes", len(samples), len(s.PingPong.Plan().Sizes()))
	if len(samples) != want || want == 0 {
		t.Errorf("%d samples, want %d", len(samples), want)
	}
	for _, smp := range samples {
		if !smp.OK() {
			t.Errorf("bad sample: %+v", smp)
		}
	}
}
