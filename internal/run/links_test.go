package run

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

func parseSpec(t *testing.T, doc string) spec.Spec {
	t.Helper()
	s, err := spec.Parse(strings.NewReader(doc), "links.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLinksRefusedBeforeAnyLab: a link the topology lacks, links on a
// driver that impairs none, and disruptions on a driver that makes none
// are refused in one line naming the field.
func TestLinksRefusedBeforeAnyLab(t *testing.T) {
	const tests = "tests: [{workload: rr, duration: 3s}]\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown host", "name: x\nmodes: [bare]\n" + tests + "links: [{link: pong, delay: 1ms}]\n",
			`links[0].link "pong": the lab has no such link (it has client, server)`},
		{"zones without zones", "name: x\nmodes: [bare]\n" + tests + "links: [{link: zones, flap: {at: [1s], down: 1s}}]\n",
			"links[0].link zones: the lab has no zones (set zone_hosts or zone_delay)"},
		{"kubernetes", "name: x\ndriver: kubernetes\nmodes: [k8s-pod]\nreference: k8s-pod\n" + tests + "links: [{link: server, delay: 1ms}]\n",
			"links: driver kubernetes does not impair links (the netns and docker drivers do)"},
		{"docker's emulated hosts", "name: x\ndriver: docker\nmodes: [bridge]\nreference: bridge\n" + tests + "links: [{link: client, rate: 10mbit}]\n", ""},
		{"docker, unknown host", "name: x\ndriver: docker\nmodes: [bridge]\nreference: bridge\n" + tests + "links: [{link: siege, rate: 10mbit}]\n",
			`links[0].link "siege": the lab has no such link (it has client, server)`},
		{"impairment's unknown host", "name: x\nmodes: [bare]\n" + tests + "impairments: {slow: [{link: pong, delay: 1ms}]}\nvariants: [{name: clean}, {name: slow, impairment: slow}]\n",
			`impairments.slow[0].link "pong": the lab has no such link (it has client, server)`},
		{"impairment", "name: x\nmodes: [bare]\n" + tests + "impairments: {slow: [{link: server, delay: 1ms}]}\nvariants: [{name: clean}, {name: slow, impairment: slow}]\n", ""},
		{"placed", "name: x\nmodes: [bare]\nplacement: {servers: 2}\n" + tests + "links: [{link: server, delay: 1ms}]\n", ""},
		{"disrupt on netns", "name: x\nmodes: [bare]\n" + tests + "disrupt: [{component: kubelet, node: server, at: [1s], down: restart}]\n",
			"disrupt: driver netns restarts no cluster daemons (kubernetes does, on a cnperf test cluster)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parseSpec(t, tc.doc)
			w := newSocketCells(s, mustCases(t, s))
			err := checkLinks(drivers.Catalog(), s, w.labConfig(), nil)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("checkLinks: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("checkLinks = %v, want %q", err, tc.want)
			}
		})
	}
}

func mustCases(t *testing.T, s spec.Spec) []workload.Case {
	t.Helper()
	cases, err := s.Cases()
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestFlappedLinkStallsStreamAndRR: on a bare lab whose server's uplink
// goes down for 1 s from 2 s into each 6 s cell, a stream's receiver
// and rr's transactions stall for at least 0.8 s within the flap, rr's
// worst round trip is at least as long, and each cell records when the
// link really went down and up.
func TestFlappedLinkStallsStreamAndRR(t *testing.T) {
	testutil.RequireRoot(t)
	s := parseSpec(t, `
name: flap
modes: [bare]
tests:
  - {workload: stream, duration: 6s, interval: 100ms}
  - {workload: rr, duration: 6s, interval: 100ms}
links:
  - {link: server, flap: {at: [2s], down: 1s}}
`)
	res, err := runSpec(t, s)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, c := range res.Meta.Cells {
		// The link comes back at the scheduled offset (at + down) from the
		// cell's start, whenever it went down: on a busy machine setting it
		// down took 12 ms once, which shortens the window, not moves it.
		if len(c.Flaps) != 1 || c.Flaps[0].Error != "" || c.Flaps[0].Down < 1.99 || c.Flaps[0].Down > 2.2 || c.Flaps[0].Up < 2.99 {
			t.Errorf("cell %d (%s) records flaps %+v, want one from 2 s to 3 s", c.Index, c.Case, c.Flaps)
		}
	}
	if l := res.Meta.Modes[0].Lab; l == nil || len(l.Links) != 1 || l.Links[0].Link != "server" {
		t.Errorf("lab record's links: %+v, want the server's uplink", res.Meta.Modes[0].Lab)
	}
	rd, err := record.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := rd.Contents()
	if err != nil {
		t.Fatal(err)
	}
	effects := analysis.Flaps(*res.Meta, c, func(m string) string { return m })
	seen := map[string]bool{}
	for _, e := range effects {
		t.Logf("%s: link %s down %.2f–%.2f s: stall %.2f s (%d intervals), recovered after %.2f s, retransmits %d, lost %d, worst round trip %.0f µs, error %q",
			e.Workload, e.Link, e.Down, e.Up, e.Stall, e.StallIntervals, e.Recover, e.Retransmits, e.Lost, e.Worst, e.Error)
		seen[e.Workload] = true
		if e.Stall < 0.8 {
			t.Errorf("%s: stall %.2f s across a 1 s flap, want at least 0.8 s", e.Workload, e.Stall)
		}
		if e.Workload == "rr" && e.Worst < 0.8e6 {
			t.Errorf("rr: longest round trip %.0f µs, want at least 0.8 s across the flap", e.Worst)
		}
	}
	if !seen["stream"] || !seen["rr"] {
		t.Errorf("effects for %v, want stream and rr", seen)
	}
}

// TestDelayedUplinkAddsRoundTrip: a 5 ms delay on the server's uplink,
// selected by the impairment condition in one variant, adds at least
// 2 × 5 ms to rr's median round trip there (the link is crossed once each
// way, delayed each way), and nothing in the clean variant beside it.
func TestDelayedUplinkAddsRoundTrip(t *testing.T) {
	testutil.RequireRoot(t)
	s := parseSpec(t, `
name: delayed
modes: [bare]
tests:
  - {workload: rr, duration: 2s}
impairments:
  slow: [{link: server, delay: 5ms}]
variants:
  - {name: clean}
  - {name: slow, impairment: slow}
`)
	res, err := runSpec(t, s)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	rd, err := record.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := rd.Contents()
	if err != nil {
		t.Fatal(err)
	}
	p50 := map[string]float64{}
	for _, r := range c.Records {
		if r.Kind != record.KindTotal {
			continue
		}
		w, _ := registry.Lookup(r.Workload)
		tot, err := w.Total(r.Data)
		if err != nil {
			t.Fatal(err)
		}
		p50[r.Mode] = tot.Values["rtt_p50"]
	}
	t.Logf("rr p50 by series (µs): %v", p50)
	if v := p50["bare/slow"]; v < 10_000 || v > 40_000 {
		t.Errorf("rr p50 %.0f µs with 5 ms on the server's uplink, want at least 10 ms (and not far more)", v)
	}
	if v, ok := p50["bare/clean"]; !ok || v > 2_000 {
		t.Errorf("rr p50 %.0f µs in the clean variant (measured: %v), want no delay", v, ok)
	}
	for _, mm := range res.Meta.Modes {
		l := mm.Lab
		switch {
		case l == nil:
			t.Errorf("%s: no lab record", mm.Mode)
		case mm.Mode == "bare/slow" && (len(l.Links) != 1 || l.Links[0].DelayVia == "" || len(l.Links[0].Directions) != 2):
			t.Errorf("%s: lab record's links %+v, want the server's uplink with what delayed it and its counters", mm.Mode, l.Links)
		case mm.Mode == "bare/clean" && len(l.Links) != 0:
			t.Errorf("%s: lab record's links %+v, want none", mm.Mode, l.Links)
		}
	}
}

// TestFlappedPongUplinkHoldsRequests: on a bare lab whose pong's uplink
// goes down for 1 s from 1 s into a ping-pong cell of 25000 small
// requests (several seconds), the requests overlapping the flap
// wait at least 0.8 s or fail, the successes stop for at least 0.8 s,
// and the report's link flaps table has the cell's row with that stall.
func TestFlappedPongUplinkHoldsRequests(t *testing.T) {
	testutil.RequireRoot(t)
	s := parseSpec(t, `
name: ppflap
modes: [bare]
pingpong:
  min_size: 1
  max_size: 1000
  coverage: 0.01
  repetitions: 2500
  concurrency: 1
  seed: 7
  chunk: 10
  retries: 3
  timeout: 10s
links:
  - {link: pong, flap: {at: [1s], down: 1s}}
`)
	res, err := runSpec(t, s)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(res.Meta.Cells) != 1 {
		t.Fatalf("%d cells, want one chunk of sizes", len(res.Meta.Cells))
	}
	c := res.Meta.Cells[0]
	t.Logf("cell %s to %s, %d samples, %d failed, flaps %+v from %s", c.Start.Format("15:04:05.000"), c.End.Format("15:04:05.000"), c.Samples, c.Failed, c.Flaps, c.FlapsFrom.Format("15:04:05.000"))
	if len(c.Flaps) != 1 || c.Flaps[0].Error != "" || c.Flaps[0].NotDone || c.Flaps[0].Down < 0.99 || c.Flaps[0].Down > 1.2 || c.Flaps[0].Up-c.Flaps[0].Down < 0.99 || c.FlapsFrom.IsZero() {
		t.Fatalf("cell records flaps %+v from %s, want one from 1 s to 2 s", c.Flaps, c.FlapsFrom)
	}
	rd, err := record.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	contents, _, err := rd.Contents()
	if err != nil {
		t.Fatal(err)
	}
	effects := analysis.Flaps(*res.Meta, contents, func(m string) string { return m })
	if len(effects) != 1 {
		t.Fatalf("effects %+v, want one", effects)
	}
	e := effects[0]
	t.Logf("link %s down %.2f–%.2f s: %d requests overlapping, %d failed, %d retries, longest %.0f µs, stall %.2f s, recovered after %.2f s, retransmits %d, note %q",
		e.Link, e.Down, e.Up, e.Requests, e.Lost, e.Retries, e.Worst, e.Stall, e.Recover, e.Retransmits, e.Error)
	if e.Error != "" || e.Requests == 0 {
		t.Fatalf("effect %+v: want requests overlapping the flap and no note", e)
	}
	if e.Worst < 0.8e6 && e.Lost == 0 {
		t.Errorf("longest latency %.0f µs and no failure among the requests overlapping a 1 s flap, want one of at least 0.8 s or a failure", e.Worst)
	}
	if e.Stall < 0.8 {
		t.Errorf("stall %.2f s across a 1 s flap, want at least 0.8 s", e.Stall)
	}
	runs, notes := report.Load([]string{res.Dir})
	if len(runs) != 1 {
		t.Fatalf("report.Load: %v", notes)
	}
	r, err := report.Build(runs, notes, report.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var row []string
	for _, tab := range r.Tables {
		if tab.ID == "tab-flaps" && len(tab.Rows) == 1 {
			for _, cell := range tab.Rows[0] {
				row = append(row, cell.Text)
			}
		}
	}
	if stall := fmt.Sprintf("%.2f", e.Stall); len(row) < 7 || row[3] != "pingpong" || row[6] != stall {
		t.Errorf("link flaps table row %q, want pingpong with the stall %s s", row, stall)
	}
}
