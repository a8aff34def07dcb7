package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// TestDaemonObservations: a cell's node daemons become figures beside the
// workload's own: CPU in ms, per GB moved, per transaction, memory.
func TestDaemonObservations(t *testing.T) {
	t0 := time.Unix(1000, 0)
	stream := map[string]any{"workload": "stream", "protocol": "tcp", "duration_s": 2, "receiver_bits_per_second": 4e9, "receiver_bytes": 1e9}
	rr := map[string]any{"workload": "rr", "type": "result", "rr_mode": "tcp", "trans_per_s": 5000, "transactions": 10000,
		"request_size": 1, "response_size": 1, "round_trip_us": map[string]any{"p50": 40, "p99": 90}, "one_way_us_half_rtt": map[string]any{"p50": 20}}
	agent := record.DaemonCost{Nodes: 2, Source: "cgroup", CPUSeconds: 0.5, CPUPercent: 25, MemoryBytes: 80e6}
	proxy := record.DaemonCost{Nodes: 2, Source: "cgroup", CPUSeconds: 0.02, CPUPercent: 1, MemoryBytes: 30e6}
	kubelet := record.DaemonCost{Nodes: 2, Source: "cgroup", CPUSeconds: 0.1, CPUPercent: 5, MemoryBytes: 50e6}
	all := map[string]record.DaemonCost{record.DaemonCNIAgent: agent, record.DaemonKubeProxy: proxy, record.DaemonKubelet: kubelet}
	tests := []struct {
		name    string
		work    string
		data    map[string]any
		daemons map[string]record.DaemonCost
		want    map[string]float64 // NaN: absent
	}{
		{"stream: ms per GB", "stream", stream, all, map[string]float64{
			"cni_cpu": 500, "cni_cpu_per_gb": 500, "cni_mem": 80, "proxy_cpu": 20, "proxy_cpu_per_gb": 20, "proxy_mem": 30,
			"kubelet_cpu": 100, "kubelet_mem": math.NaN(), "cni_us_per_trans": math.NaN()}},
		{"rr: per transaction", "rr", rr, map[string]record.DaemonCost{record.DaemonCNIAgent: agent}, map[string]float64{
			"cni_cpu": 500, "cni_us_per_trans": 50, "proxy_cpu": math.NaN(), "kubelet_cpu": math.NaN()}},
		{"no daemons: no figures", "stream", stream, nil, map[string]float64{
			"cni_cpu": math.NaN(), "proxy_cpu": math.NaN(), "cni_cpu_per_gb": math.NaN()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := []record.Record{rec(t, "pod", 0, 0, tt.work, tt.work, "total", tt.data)}
			cells := map[int]Cell{0: {Start: t0, End: t0.Add(2 * time.Second), Mode: "pod", Daemons: tt.daemons}}
			checkOneObservation(t, Observations(recs, nil, nil, cells, func(m string) string { return m }), tt.want)
		})
	}
}

// TestDaemonCases: the daemons' figures are a case's metrics only when a
// series has them, so runs without them show the tables they always did.
func TestDaemonCases(t *testing.T) {
	obs := []Observation{
		{Series: "host", Case: "stream", Work: "stream", Values: map[string]float64{"throughput": 1000, "cni_cpu": 10}},
		{Series: "pod", Case: "stream", Work: "stream", Values: map[string]float64{"throughput": 900, "cni_cpu": 30}},
		{Series: "bare", Case: "plain", Work: "stream", Values: map[string]float64{"throughput": 1000}},
	}
	cases := Cases(obs, []string{"host", "pod", "bare"}, "host", 1)
	has := func(c Case, key string) bool {
		for _, m := range c.Metrics {
			if m.Key == key {
				return true
			}
		}
		return false
	}
	for _, c := range cases {
		if want := c.Label == "stream"; has(c, "cni_cpu") != want {
			t.Errorf("case %s: cni_cpu a metric %v, want %v", c.Label, !want, want)
		}
	}
	for _, m := range cases[0].SummaryMetrics() {
		if m.Key == "cni_cpu" {
			t.Error("the summary shows the agent's CPU per cell, not per unit of work")
		}
	}
	// Per transaction where the case counts them, else per GB: once.
	for _, tt := range []struct {
		keys []string
		want []string
	}{
		{[]string{"cni_cpu_per_gb", "cni_us_per_trans", "proxy_cpu_per_gb"}, []string{"cni_us_per_trans", "proxy_cpu_per_gb"}},
		{[]string{"cni_cpu_per_gb", "proxy_cpu_per_gb", "proxy_us_per_trans"}, []string{"cni_cpu_per_gb", "proxy_us_per_trans"}},
	} {
		v := map[string]float64{"throughput": 1}
		for _, k := range tt.keys {
			v[k] = 1
		}
		c := Cases([]Observation{{Series: "pod", Case: "rr", Work: "rr", Values: v}}, []string{"pod"}, "", 1)[0]
		var got []string
		for _, m := range c.SummaryMetrics() {
			if strings.HasPrefix(m.Key, "cni_") || strings.HasPrefix(m.Key, "proxy_") {
				got = append(got, m.Key)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%v: summary shows %v, want %v", tt.keys, got, tt.want)
		}
	}
	if r := cases[0].Rows[1]; !near(r.Stats["cni_cpu"].Mean.Percent, 200) {
		t.Errorf("pod's agent CPU against host: %v, want +200 %%", r.Stats["cni_cpu"].Mean.Percent)
	}
}

// checkOneObservation checks that obs is one observation whose values are
// want's, a NaN in want meaning the key must be absent.
func checkOneObservation(t *testing.T, obs []Observation, want map[string]float64) {
	t.Helper()
	if len(obs) != 1 {
		t.Fatalf("%d observations, want 1", len(obs))
	}
	for k, w := range want {
		g, ok := obs[0].Values[k]
		switch {
		case math.IsNaN(w) && ok:
			t.Errorf("%s = %v, want none", k, g)
		case !math.IsNaN(w) && (!ok || !near(g, w)):
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, w)
		}
	}
}
