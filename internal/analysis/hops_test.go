package analysis

import (
	"math"
	"testing"

	"github.com/cnperf/cnperf/internal/workload"
)

// hopCase is a chain case with one series' mean of metric key.
func hopCase(test int, work, label, param, value, key string, means map[string]float64) Case {
	c := Case{Label: label + " " + param + "=" + value, Workload: work, Test: test, Param: param, Value: value,
		Metrics: []workload.Metric{{Key: key}}}
	for s, m := range means {
		c.Rows = append(c.Rows, CaseRow{Series: s, N: 3, Stats: map[string]CaseStat{key: {N: 3, Mean: Change{Value: m}, SD: Change{Value: 1}}}})
	}
	return c
}

// TestHopsSumsTheSegments: the latency k hops away stands beside the sum
// of segments 1..k (segment 1 being the one-hop case), and throughput
// beside the share left of the first hop's; other cases are ignored.
func TestHopsSumsTheSegments(t *testing.T) {
	cases := []Case{
		{Label: "plain", Workload: "rr", Test: 0},
		hopCase(1, "rr", "lat", "hops", "1", "rtt_p50", map[string]float64{"bare": 20}),
		hopCase(1, "rr", "lat", "hops", "2", "rtt_p50", map[string]float64{"bare": 45}),
		hopCase(1, "rr", "lat", "hops", "3", "rtt_p50", map[string]float64{"bare": 70}),
		hopCase(1, "rr", "lat", "segment", "2", "rtt_p50", map[string]float64{"bare": 21}),
		// segment 3 missing: no sum for 3 hops
		hopCase(2, "stream", "tcp", "hops", "1", "throughput", map[string]float64{"bare": 1000}),
		hopCase(2, "stream", "tcp", "hops", "2", "throughput", map[string]float64{"bare": 400}),
	}
	got := Hops(cases)
	if len(got) != 2 {
		t.Fatalf("%d hop tests, want 2: %+v", len(got), got)
	}
	lat, tcp := got[0], got[1]
	if lat.Label != "lat" || lat.Metric.Key != "rtt_p50" || len(lat.Rows) != 3 || len(lat.Hops) != 3 {
		t.Fatalf("latency: %+v", lat)
	}
	if r := lat.Rows[0]; r.SegmentSum != 20 || r.Excess != 0 {
		t.Errorf("1 hop: %+v", r)
	}
	if r := lat.Rows[1]; r.Hops != 2 || r.SegmentSum != 41 || r.Excess != 4 || r.OfFirst != 2.25 || r.PerHop != 25 {
		t.Errorf("2 hops: %+v, want sum 41, excess 4", r)
	}
	if r := lat.Rows[0]; !math.IsNaN(r.PerHop) {
		t.Errorf("1 hop has a per-hop cost: %+v", r)
	}
	if r := lat.Rows[2]; !math.IsNaN(r.SegmentSum) || !math.IsNaN(r.Excess) || r.PerHop != 25 {
		t.Errorf("3 hops without segment 3: %+v, want no sum", r)
	}
	if tcp.Metric.Key != "throughput" || len(tcp.Rows) != 2 || tcp.Rows[1].OfFirst != 0.4 || !math.IsNaN(tcp.Rows[1].SegmentSum) {
		t.Errorf("throughput: %+v", tcp)
	}
	if Hops(cases[:1]) != nil {
		t.Error("a run without a chain has hop tests")
	}
}
