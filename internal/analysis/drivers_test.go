package analysis_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

func TestDriverPairs(t *testing.T) {
	tests := []struct {
		name    string
		driver  string
		drivers []string
		modes   []string
		want    []string // "mode base>other baseKey|otherKey"
	}{
		{"netns and docker, bare once", "netns", []string{"netns", "docker"}, []string{"bare", "bridge", "overlay"},
			[]string{"bridge netns>docker bridge|bridge@docker", "overlay netns>docker overlay|overlay@docker"}},
		{"docker first", "netns", []string{"docker", "netns"}, []string{"host"},
			[]string{"host docker>netns host|host@netns"}},
		{"one driver", "docker", nil, []string{"bare", "bridge"}, nil},
		{"drivers listed but only bare", "netns", []string{"netns", "docker"}, []string{"bare"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := spec.Spec{Driver: tc.driver, Drivers: tc.drivers, Modes: tc.modes}
			var got []string
			for _, p := range analysis.DriverPairs(s.ModeKeys(), s.SplitModeKey) {
				got = append(got, fmt.Sprintf("%s %s>%s %s|%s", p.Mode, p.Base, p.Other, p.BaseKey, p.OtherKey))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("pairs\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// driverWant is the part of a DriverRow the tests check.
type driverWant struct {
	kase, mode, metric string
	base, other, ratio float64
}

func checkDriverRows(t *testing.T, got []analysis.DriverRow, want []driverWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Case != w.kase || g.Mode != w.mode || g.Metric != w.metric || g.Base != "netns" || g.Other != "docker" ||
			!near(g.BaseValue, w.base) || !near(g.OtherValue, w.other) || !near(g.Ratio, w.ratio) {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestDriversOfASweep(t *testing.T) {
	s := spec.Spec{Driver: "netns", Drivers: []string{"netns", "docker"}, Modes: []string{"bare", "bridge"}}
	keys := s.ModeKeys() // bare, bridge, bridge@docker
	pairs := analysis.DriverPairs(keys, s.SplitModeKey)
	// 2000 B in 2 ms is 1 MB/s; in 1 ms, 2 MB/s.
	netns := []record.Sample{ok("bridge", 2000, 2, 3), ok("bridge", 2000, 2, 3), ok("bare", 2000, 0.5, 1)}
	docker := []record.Sample{ok("bridge@docker", 2000, 1, 1.5), ok("bridge@docker", 2000, 1, 1.5)}
	noSiege := func(in []record.Sample) []record.Sample {
		out := make([]record.Sample, len(in))
		for i, x := range in {
			x.LatencyMS = 0
			out[i] = x
		}
		return out
	}
	// docker's cells ran the same chunks at 1.25 times netns's rate.
	rates := map[string][]float64{"bridge": {100, 300, 200}, "bridge@docker": {125, 375, 250}}
	// docker's cells ran but left no successful sample.
	failedCells := map[string][]float64{"bridge": {100, 300, 200}, "bridge@docker": {999}}
	tests := []struct {
		name    string
		samples []record.Sample
		rates   map[string][]float64
		pairs   []analysis.DriverPair
		want    []driverWant
	}{
		{"both drivers", append(netns, docker...), rates, pairs, []driverWant{
			{"", "bridge", "transfer", 1, 2, 2},
			{"", "bridge", "latency", 2, 1, 0.5},
			{"", "bridge", "outer", 3, 1.5, 0.5},
			{"", "bridge", "cell_rps", 200, 250, 1.25}, // median of the cells' rates, not of requests
		}},
		{"docker not measured", netns, failedCells, pairs, []driverWant{
			{"", "bridge", "transfer", 1, nan(), nan()},
			{"", "bridge", "latency", 2, nan(), nan()},
			{"", "bridge", "outer", 3, nan(), nan()},
			{"", "bridge", "cell_rps", 200, nan(), nan()}, // its cell rate without samples is not a measurement
		}},
		{"no siege latency on either: left out", noSiege(append(netns, docker...)), rates, pairs, []driverWant{
			{"", "bridge", "transfer", 1, 2, 2},
			{"", "bridge", "latency", 2, 1, 0.5},
			{"", "bridge", "cell_rps", 200, 250, 1.25},
		}},
		{"one driver: nothing", append(netns, docker...), rates, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := analysis.NewSweep(tc.samples, cellRates(tc.rates), keys)
			checkDriverRows(t, analysis.Drivers([]analysis.Case{set.Case(pingpong.Descriptor)}, tc.pairs), tc.want)
		})
	}
}

func TestDriversOfRepetitions(t *testing.T) {
	s := spec.Spec{Driver: "netns", Drivers: []string{"netns", "docker"}, Modes: []string{"bare", "bridge"}}
	series := s.ModeKeys()
	pairs := analysis.DriverPairs(series, s.SplitModeKey)
	o := func(series, kase, work string, test int, v map[string]float64) analysis.Observation {
		return analysis.Observation{Series: series, Case: kase, Work: work, Test: test, Values: v}
	}
	obs := []analysis.Observation{
		// stream: netns 800, 900 → mean 850; docker 680 → 0.8.
		o("bare", "stream", "stream", 0, map[string]float64{"throughput": 1000, "retransmits": 1}),
		o("bridge", "stream", "stream", 0, map[string]float64{"throughput": 800, "retransmits": 5, "client_cpu": 1}),
		o("bridge", "stream", "stream", 0, map[string]float64{"throughput": 900, "retransmits": 5, "client_cpu": 1}),
		o("bridge@docker", "stream", "stream", 0, map[string]float64{"throughput": 680, "retransmits": 9, "client_cpu": 2}),
		// jitter carries a throughput too; its headline is the jitter.
		o("bridge", "jitter", "jitter", 1, map[string]float64{"throughput": 100, "jitter": 0.2}),
		o("bridge@docker", "jitter", "jitter", 1, map[string]float64{"throughput": 100, "jitter": 0.3}),
		o("bridge", "rr udp", "rr", 2, map[string]float64{"trans_per_s": 10000, "rtt_p50": 50}),
		o("bridge@docker", "rr udp", "rr", 2, map[string]float64{"trans_per_s": 5000, "rtt_p50": 100}),
		o("bridge", "datagram", "datagram", 3, map[string]float64{"mb_per_s": 50, "packets_per_s": 9, "success": 100}),
		o("bridge@docker", "datagram", "datagram", 3, map[string]float64{"mb_per_s": 55, "packets_per_s": 9, "success": 100}),
		// Ran on netns only (docker's cells failed).
		o("bridge", "stream udp", "stream", 4, map[string]float64{"throughput": 90, "loss": 1}),
		// Ran on bare only: no pair has a value, so no row.
		o("bare", "only bare", "stream", 5, map[string]float64{"throughput": 1}),
	}
	cases := analysis.Cases(obs, series, "bare", 2)
	checkDriverRows(t, analysis.Drivers(cases, pairs), []driverWant{
		{"stream", "bridge", "throughput", 850, 680, 0.8},
		{"jitter", "bridge", "jitter", 0.2, 0.3, 1.5},
		{"rr udp", "bridge", "trans_per_s", 10000, 5000, 0.5},
		{"datagram", "bridge", "mb_per_s", 50, 55, 1.1},
		{"stream udp", "bridge", "throughput", 90, nan(), nan()},
	})
}

func TestHeadline(t *testing.T) {
	m := func(keys ...string) []workload.Metric {
		var out []workload.Metric
		for _, k := range keys {
			sm, ok := analysis.CaseMetricByKey(k)
			if !ok {
				t.Fatalf("no metric %q", k)
			}
			out = append(out, sm)
		}
		return out
	}
	tests := []struct {
		name, workload string
		metrics        []workload.Metric
		want           string // "" for none
	}{
		{"stream", "stream", m("throughput", "retransmits"), "throughput"},
		{"jitter over throughput", "jitter", m("throughput", "loss", "jitter"), "jitter"},
		{"rr", "rr", m("trans_per_s", "rtt_p50"), "trans_per_s"},
		{"datagram", "datagram", m("mb_per_s", "packets_per_s"), "mb_per_s"},
		{"unknown workload: first summary metric", "other", m("client_cpu", "loss"), "loss"},
		{"headline missing: first summary metric", "stream", m("loss"), "loss"},
		{"only cost metrics: none", "stream", m("client_cpu"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := analysis.Case{Workload: tc.workload, Metrics: tc.metrics}.Headline()
			if ok != (tc.want != "") || got.Key != tc.want {
				t.Errorf("Headline = %q, %v; want %q", got.Key, ok, tc.want)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteDriverTable(t *testing.T) {
	pp := []analysis.DriverRow{
		{Mode: "bridge", Base: "netns", Other: "docker", Metric: "transfer", Short: "transfer MB/s", BaseValue: 150.75, OtherValue: 163.1, Ratio: 163.1 / 150.75},
		{Mode: "bridge", Base: "netns", Other: "docker", Metric: "latency", Short: "ping->pong ms", BaseValue: 0.3048, OtherValue: math.NaN(), Ratio: math.NaN()},
		{Mode: "bridge", Base: "netns", Other: "docker", Metric: "cell_rps", Short: "req/s", BaseValue: 1597.9, OtherValue: 1766.6, Ratio: 1766.6 / 1597.9},
	}
	sock := []analysis.DriverRow{
		{Case: "stream", Mode: "host", Base: "docker", Other: "netns", Metric: "throughput", Short: "Mbit/s", BaseValue: 17762, OtherValue: 16150, Ratio: 16150.0 / 17762},
		{Case: "jitter", Mode: "host", Base: "docker", Other: "netns", Metric: "jitter", Short: "jitter ms", BaseValue: 0.0123, OtherValue: 0.0246, Ratio: 2},
	}
	tests := []struct {
		name string
		rows []analysis.DriverRow
		want string
	}{
		{"ping-pong: the summary's decimals", pp, `
drivers: each mode on docker against netns (docker/netns near 1: the same datapath)
mode    metric         netns  docker  docker/netns
bridge  transfer MB/s  150.8   163.1          1.08
bridge  ping->pong ms  0.305       -             -
bridge  req/s           1598    1767          1.11
`},
		{"sockets: a test column, three significant digits", sock, `
drivers: each mode on netns against docker (netns/docker near 1: the same datapath)
test    mode  metric     docker   netns  netns/docker
stream  host  Mbit/s      17762   16150          0.91
jitter  host  jitter ms  0.0123  0.0246          2.00
`},
		{"no rows: nothing", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sb strings.Builder
			if err := report.WriteDriverTable(&sb, tc.rows); err != nil {
				t.Fatal(err)
			}
			if sb.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", sb.String(), tc.want)
			}
		})
	}
	err := report.WriteDriverTable(failWriter{}, pp)
	if err == nil || !strings.Contains(err.Error(), "write driver table") || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("error = %v, want it wrapped with context", err)
	}
}
