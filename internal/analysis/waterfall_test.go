package analysis

import (
	"math"
	"testing"
)

// TestWaterfalls: each series steps from the last one before it that
// measured the figure; what it added is the difference of the means, with
// an interval from the repetitions paired unit by unit that holds it.
func TestWaterfalls(t *testing.T) {
	type step struct {
		series, from string
		total, added float64 // added NaN: the base
	}
	nan := math.NaN()
	tests := []struct {
		name     string
		workload string
		values   map[string]map[string]float64 // series → the figures of its every repetition (drift added per unit)
		key      string                        // the stepped figure
		want     []step                        // nil: no waterfall of key
	}{
		{name: "rr's round trip, one layer at a time", workload: "rr", key: "rtt_p50",
			values: map[string]map[string]float64{"bare": {"rtt_p50": 50}, "veth": {"rtt_p50": 60}, "bridge": {"rtt_p50": 90}},
			want:   []step{{"bare", "", 50, nan}, {"veth", "bare", 60, 10}, {"bridge", "veth", 90, 30}}},
		{name: "a layer that got faster adds less than nothing", workload: "rr", key: "rtt_p99",
			values: map[string]map[string]float64{"bare": {"rtt_p99": 80}, "veth": {"rtt_p99": 70}, "bridge": {"rtt_p99": 95}},
			want:   []step{{"bare", "", 80, nan}, {"veth", "bare", 70, -10}, {"bridge", "veth", 95, 25}}},
		{name: "a series without the figure is passed over", workload: "stream", key: "cpu_per_gb",
			values: map[string]map[string]float64{"bare": {"cpu_per_gb": 2}, "veth": {"throughput": 900}, "bridge": {"cpu_per_gb": 3}},
			want:   []step{{"bare", "", 2, nan}, {"bridge", "bare", 3, 1}}},
		{name: "softirq's share of the busy time", workload: "stream", key: "softirq_share",
			values: map[string]map[string]float64{"bare": {"user_s": 1, "system_s": 2, "softirq_s": 1}, "veth": {"user_s": 1, "system_s": 1, "softirq_s": 2},
				"bridge": {"user_s": 0, "system_s": 0, "softirq_s": 0}},
			want: []step{{"bare", "", 25, nan}, {"veth", "bare", 50, 25}}},
		{name: "one series measured it: no step", workload: "rr", key: "rtt_p50",
			values: map[string]map[string]float64{"bare": {"rtt_p50": 50}, "veth": {}, "bridge": {}}},
		{name: "a workload the waterfall does not step", workload: "jitter", key: "rtt_p50",
			values: map[string]map[string]float64{"bare": {"rtt_p50": 50}, "veth": {"rtt_p50": 60}, "bridge": {"rtt_p50": 70}}},
	}
	series := []string{"bare", "veth", "bridge"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Five repetitions on two instances; every figure drifts alike
			// within a unit (±2 %), as interleaved cells do.
			var obs []Observation
			for rep := range 5 {
				for _, s := range series {
					v := map[string]float64{}
					for k, x := range tc.values[s] {
						v[k] = x * (1 + 0.01*float64(rep%3-1)) * (1 + 0.001*float64(len(s)))
					}
					obs = append(obs, Observation{Series: s, Case: tc.workload, Work: tc.workload, Unit: rep, Instance: rep % 2, Values: v})
				}
			}
			var got *Waterfall
			for _, w := range Waterfalls(Cases(obs, series, "bare", 2), series) {
				if w.Metric.Key == tc.key {
					got = &w
				}
			}
			if got == nil || tc.want == nil {
				if got != nil || tc.want != nil {
					t.Fatalf("waterfall of %s: %+v, want steps %v", tc.key, got, tc.want)
				}
				return
			}
			if len(got.Steps) != len(tc.want) {
				t.Fatalf("steps %+v, want %v", got.Steps, tc.want)
			}
			for i, w := range tc.want {
				g := got.Steps[i]
				if g.Series != w.series || g.From != w.from || math.Abs(g.Total-w.total) > 0.01*math.Abs(w.total) {
					t.Errorf("step %d: %s from %q, total %g; want %s from %q, total %g", i, g.Series, g.From, g.Total, w.series, w.from, w.total)
				}
				if math.IsNaN(w.added) {
					if !math.IsNaN(g.Added.Diff) {
						t.Errorf("step %d, the base: added %g, want none", i, g.Added.Diff)
					}
					continue
				}
				prev := got.Steps[i-1].Total
				if math.Abs(g.Added.Diff-(g.Total-prev)) > 1e-9 || !g.Added.Known() || !(g.Added.Lo <= w.added && w.added <= g.Added.Hi) ||
					g.Added.Units != 5 || g.Added.Instances != 2 {
					t.Errorf("step %d: added %+v, want %g = its total less the one before, inside a known interval from 5 units on 2 instances", i, g.Added, w.added)
				}
			}
		})
	}
}
