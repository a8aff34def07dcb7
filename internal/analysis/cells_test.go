package analysis

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// TestKernelObservations: a cell's kernel time becomes figures beside the
// workload's own: seconds, per GB moved, per transaction where the case
// counts them, the busiest core's softirq share and the counts.
func TestKernelObservations(t *testing.T) {
	t0 := time.Unix(1000, 0)
	stream := map[string]any{"workload": "stream", "protocol": "tcp", "duration_s": 2, "receiver_bits_per_second": 4e9, "receiver_bytes": 1e9}
	rr := map[string]any{"workload": "rr", "type": "result", "rr_mode": "tcp", "trans_per_s": 5000, "transactions": 10000,
		"request_size": 1, "response_size": 1, "round_trip_us": map[string]any{"p50": 40, "p99": 90}, "one_way_us_half_rtt": map[string]any{"p50": 20}}
	k := &record.CellKernel{CPUSeconds: 4, UserSeconds: 1, SystemSeconds: 0.5, SoftirqSeconds: 0.8, BusiestCore: 1,
		BusiestSoftirqPercent: 60, NetRX: 1000, NetTX: 200, Bytes: 1e9}
	tests := []struct {
		name   string
		work   string
		data   map[string]any
		kernel *record.CellKernel
		want   map[string]float64 // NaN: absent
	}{
		{"stream: per GB", "stream", stream, k, map[string]float64{
			"user_s": 1, "system_s": 0.5, "softirq_s": 0.8, "system_per_gb": 0.5, "softirq_per_gb": 0.8,
			"busiest_softirq": 60, "net_rx": 1000, "net_tx": 200, "softirq_us_per_trans": math.NaN()}},
		// 0.8 s of softirq over a 2 s cell at 5000 transactions a second: 80 µs each.
		{"rr: per transaction", "rr", rr, k, map[string]float64{
			"softirq_s": 0.8, "softirq_us_per_trans": 80, "system_us_per_trans": 50}},
		{"no kernel record: no figures", "stream", stream, nil, map[string]float64{
			"softirq_s": math.NaN(), "system_per_gb": math.NaN(), "net_rx": math.NaN()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := []record.Record{rec(t, "bare", 0, 0, tt.work, tt.work, "total", tt.data)}
			cells := map[int]Cell{0: {Start: t0, End: t0.Add(2 * time.Second), Mode: "bare", Kernel: tt.kernel}}
			checkOneObservation(t, Observations(recs, nil, nil, cells, func(m string) string { return m }), tt.want)
		})
	}
}

// TestKernelCases: the kernel's figures are a case's metrics only when a
// series has them (stored runs show the tables they always did), and the
// summary shows softirq and system time per transaction where the case
// counts them, else per GB, and not the raw seconds.
func TestKernelCases(t *testing.T) {
	obs := []Observation{
		{Series: "bare", Case: "rr", Work: "rr", Values: map[string]float64{"trans_per_s": 1000, "softirq_s": 1, "softirq_per_gb": 3, "softirq_us_per_trans": 9, "system_per_gb": 2, "system_us_per_trans": 4}},
		{Series: "bare", Case: "stream", Work: "stream", Values: map[string]float64{"throughput": 1000, "softirq_s": 1, "softirq_per_gb": 3, "system_per_gb": 2}},
		{Series: "bare", Case: "old", Work: "stream", Values: map[string]float64{"throughput": 1000}},
	}
	keys := func(ms []Case, label string, summary bool) []string {
		var out []string
		for _, c := range ms {
			if c.Label != label {
				continue
			}
			list := c.Metrics
			if summary {
				list = c.SummaryMetrics()
			}
			for _, m := range list {
				if slices.Contains([]string{"softirq_s", "softirq_per_gb", "softirq_us_per_trans", "system_per_gb", "system_us_per_trans"}, m.Key) {
					out = append(out, m.Key)
				}
			}
		}
		return out
	}
	cases := Cases(obs, []string{"bare"}, "bare", 1)
	for _, tt := range []struct {
		label   string
		summary bool
		want    []string
	}{
		{"rr", false, []string{"softirq_s", "system_per_gb", "softirq_per_gb", "system_us_per_trans", "softirq_us_per_trans"}},
		{"rr", true, []string{"system_us_per_trans", "softirq_us_per_trans"}},
		{"stream", true, []string{"system_per_gb", "softirq_per_gb"}},
		{"old", false, nil},
	} {
		if got := keys(cases, tt.label, tt.summary); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s (summary %v): %v, want %v", tt.label, tt.summary, got, tt.want)
		}
	}
}

func TestMeanInterval(t *testing.T) {
	nan := math.NaN()
	for _, tt := range []struct {
		name string
		xs   []float64
		want MeanCI
	}{
		{"none", nil, MeanCI{nan, nan, nan, 0}},
		{"one: no interval", []float64{3}, MeanCI{3, nan, nan, 1}},
		// sd 1, n 4: ± 3.1824 · 1/2.
		{"four", []float64{1, 2, 3, 2}, MeanCI{2, 2 - 3.1824*math.Sqrt(2.0/3)/2, 2 + 3.1824*math.Sqrt(2.0/3)/2, 4}},
		{"not finite left out", []float64{5, math.Inf(1), nan, 5}, MeanCI{5, 5, 5, 2}},
	} {
		got := MeanInterval(tt.xs)
		same := func(a, b float64) bool { return (math.IsNaN(a) && math.IsNaN(b)) || near(a, b) }
		if got.N != tt.want.N || !same(got.Mean, tt.want.Mean) || !same(got.Lo, tt.want.Lo) || !same(got.Hi, tt.want.Hi) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestKernelRows: per series in the series' order, per GB over the cells
// that moved bytes, per transaction over those that counted some, the
// pinned cores' figures where recorded.
func TestKernelRows(t *testing.T) {
	cell := func(series string, soft, sys float64, bytes int64, requests int, pinned *record.CellKernel) record.Cell {
		return record.Cell{Mode: series, Samples: requests, Kernel: &record.CellKernel{CPUSeconds: 10, SoftirqSeconds: soft, SystemSeconds: sys,
			UserSeconds: 1, NetRX: 10, NetTX: 4, BusiestSoftirqPercent: 50, Bytes: bytes, Pinned: pinned}}
	}
	pin := &record.CellKernel{Cores: []int{0}, CPUSeconds: 1, SoftirqSeconds: 0.2, SystemSeconds: 0.1}
	var m record.Meta // a ping-pong run: per request
	m.Spec.Modes = []string{"bare", "bridge", "macvlan"}
	m.Cells = []record.Cell{
		cell("bridge", 2, 1, 1e9, 1e6, pin), cell("bare", 1, 1, 2e9, 1e6, nil), cell("bridge", 4, 1, 1e9, 1e6, pin),
		cell("bare", 1, 1, 0, 0, nil), // moved nothing, counted nothing: only in the counts
	}
	rows := KernelRows(m)
	if len(rows) != 2 || rows[0].Series != "bare" || rows[1].Series != "bridge" {
		t.Fatalf("rows %+v", rows)
	}
	bare, br := rows[0], rows[1]
	checks := []struct {
		name string
		got  MeanCI
		mean float64
		n    int
	}{
		{"bare softirq/GB", bare.SoftirqPerGB, 0.5, 1},
		{"bare system/GB", bare.SystemPerGB, 0.5, 1},
		{"bare softirq µs/trans", bare.SoftirqUSPerTrans, 1, 1},
		{"bare NET_RX", bare.NetRX, 10, 2},
		{"bridge softirq/GB", br.SoftirqPerGB, 3, 2},
		{"bridge softirq µs/trans", br.SoftirqUSPerTrans, 3, 2},
		{"bridge pinned softirq/GB", br.PinnedSoftirqPerGB, 0.2, 2},
		{"bare pinned: none", bare.PinnedSoftirqPerGB, math.NaN(), 0},
	}
	for _, c := range checks {
		if c.got.N != c.n || !(near(c.got.Mean, c.mean) || math.IsNaN(c.mean) && math.IsNaN(c.got.Mean)) {
			t.Errorf("%s: %+v, want mean %v over %d", c.name, c.got, c.mean, c.n)
		}
	}
	if bare.Cells != 2 || !reflect.DeepEqual(br.PinnedCores, []int{0}) || bare.PinnedCores != nil {
		t.Errorf("cells %d, pinned %v %v", bare.Cells, br.PinnedCores, bare.PinnedCores)
	}
	if !(br.SoftirqPerGB.Lo < 3 && br.SoftirqPerGB.Hi > 3) {
		t.Errorf("bridge's interval %+v does not hold its mean", br.SoftirqPerGB)
	}
}
