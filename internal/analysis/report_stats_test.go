package analysis_test

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
)

// near reports whether a and b agree to 1e-9 (relative for large values),
// or are both NaN.
func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

// lat builds successful samples of one size whose latency metric
// (DurationMS) takes the given values.
func lat(size int, durs ...float64) []record.Sample {
	var out []record.Sample
	for _, d := range durs {
		out = append(out, record.Sample{Workload: "pingpong", Size: size, Length: size, Code: 200, DurationMS: d, LatencyMS: d + 1})
	}
	return out
}

func cat(parts ...[]record.Sample) []record.Sample { return slices.Concat(parts...) }

func metric(t *testing.T, key string) analysis.Metric {
	t.Helper()
	m, ok := analysis.MetricByKey(key)
	if !ok {
		t.Fatalf("no metric %q", key)
	}
	return m
}

// fixture, latency values (ms) by size; MaxSize 40:
//
//	bare:    10: 1 2 3 4 5   20: 10   30: 20   40: 30 40
//	bridge:  10: 2 4                  30: 50
//	overlay: 10: 6                             40: 100
func fixture(t *testing.T) analysis.Dataset {
	t.Helper()
	d, warns := analysis.NewDataset([]string{"bare", "bridge", "overlay"}, map[string][]record.Sample{
		"bare":    cat(lat(10, 1, 2, 3, 4, 5), lat(20, 10), lat(30, 20), lat(40, 30, 40)),
		"bridge":  cat(lat(10, 4, 2), lat(30, 50)),
		"overlay": cat(lat(40, 100), lat(10, 6)),
	}, "bare")
	if len(warns) != 0 || d.Reference != "bare" || d.MaxSize != 40 {
		t.Fatalf("fixture: warns %v, reference %q, MaxSize %d", warns, d.Reference, d.MaxSize)
	}
	return d
}

func TestMetrics(t *testing.T) {
	s := record.Sample{Size: 500000, Length: 500000, Code: 200, DurationMS: 250, LatencyMS: 300}
	want := []struct {
		key, title, unit string
		higher           bool
		v                float64
	}{
		{"transfer", "Transfer rate", "MB/s", true, 2}, // 500000·1000/250/1e6
		{"latency", "Latency", "ms", false, 250},
		{"rps", "Requests per second", "req/s", true, 4}, // 1000/250
		{"outer", "Siege latency", "ms", false, 300},
	}
	ms := analysis.PingPongMetrics()
	if len(ms) != len(want) {
		t.Fatalf("%d metrics, want %d", len(ms), len(want))
	}
	for i, w := range want {
		m := ms[i]
		if m.Key != w.key || m.Title != w.title || m.Unit != w.unit || m.HigherIsBetter != w.higher || m.Value(s) != w.v {
			t.Errorf("metric %d = {%q %q %q %v %v}, want %+v", i, m.Key, m.Title, m.Unit, m.HigherIsBetter, m.Value(s), w)
		}
		if b, ok := analysis.MetricByKey(w.key); !ok || b.Key != w.key {
			t.Errorf("MetricByKey(%q) = %q, %v", w.key, b.Key, ok)
		}
	}
	if _, ok := analysis.MetricByKey("nope"); ok {
		t.Error(`MetricByKey("nope") found a metric`)
	}
}

func TestNewDataset(t *testing.T) {
	failed := record.Sample{Size: 99, Length: 0, Code: 503, DurationMS: 1}
	noDur := record.Sample{Size: 98, Length: 98, Code: 200}
	samples := map[string][]record.Sample{
		"bare":   cat(lat(10, 1, 2), []record.Sample{failed}),
		"bridge": {failed, noDur},
		"host":   lat(10, 1),
	}
	tests := []struct {
		name       string
		series     []string
		ref        string
		wantSeries []string
		wantRef    string
		wantWarns  []string
	}{
		{"reference not a series", []string{"bare", "bridge", "bare"}, "overlay", []string{"bare", "bridge"}, "", []string{
			`series "bridge" has no successful samples`,
			`samples of "host" are not in the series list: left out`,
			`reference "overlay" is not among the series: ratios are left out`}},
		{"reference without samples", []string{"bare", "x", "host", "bridge"}, "x", []string{"bare", "x", "host", "bridge"}, "", []string{
			`series "bridge" has no successful samples`,
			`reference "x" has no samples: ratios are left out`}},
		{"reference without successful samples", []string{"bare", "bridge", "host"}, "bridge", []string{"bare", "bridge", "host"}, "", []string{
			`reference "bridge" has no successful samples: ratios are left out`}},
		{"fine", []string{"bare", "host"}, "bare", []string{"bare", "host"}, "bare", []string{
			`samples of "bridge" are not in the series list: left out`}},
		{"no series list: every key, sorted; no reference", nil, "", []string{"bare", "bridge", "host"}, "", []string{
			`series "bridge" has no successful samples`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, warns := analysis.NewDataset(tt.series, samples, tt.ref)
			if !reflect.DeepEqual(d.Series, tt.wantSeries) || d.Reference != tt.wantRef || !reflect.DeepEqual(warns, tt.wantWarns) {
				t.Errorf("got series %q, reference %q, warnings\n%q\nwant %q, %q,\n%q", d.Series, d.Reference, warns, tt.wantSeries, tt.wantRef, tt.wantWarns)
			}
		})
	}
	d, _ := analysis.NewDataset([]string{"bare", "bridge"}, samples, "bare")
	if len(d.OK["bare"]) != 2 || d.Failed["bare"] != 1 || len(d.OK["bridge"]) != 0 || d.Failed["bridge"] != 2 || d.MaxSize != 10 {
		t.Errorf("OK %d/%d, Failed %v, MaxSize %d; want 2/0, bare 1 bridge 2, 10 (failed sizes don't count)",
			len(d.OK["bare"]), len(d.OK["bridge"]), d.Failed, d.MaxSize)
	}
}

func TestBins(t *testing.T) {
	d := fixture(t)
	lm := metric(t, "latency")
	nan := math.NaN()
	tests := []struct {
		name   string
		series string
		n      int
		want   []analysis.Bin
	}{
		// n=2: two groups of two of the sizes 10, 20, 30, 40: [10, 20] holds
		// 1..5 and 10; [30, 40] holds 20, 30, 40.
		// Type 7, h=(n-1)p. 1 2 3 4 5 10: P5 h=.25→1.25, P25 h=1.25→2.25, P50 h=2.5→3.5, P75 h=3.75→4.75, P95 h=4.75→8.75.
		// 20 30 40: P5 h=.1→21, P25 h=.5→25, P50 30, P75 h=1.5→35, P95 h=1.9→39.
		{"two groups", "bare", 2, []analysis.Bin{
			{Lo: 10, Hi: 20, N: 6, P5: 1.25, P25: 2.25, Median: 3.5, P75: 4.75, P95: 8.75},
			{Lo: 30, Hi: 40, N: 3, P5: 21, P25: 25, Median: 30, P75: 35, P95: 39},
		}},
		// n=4: one group per size. 1..5: P5 h=.2→1.2, P25 2, P50 3, P75 4, P95 h=3.8→4.8;
		// 30 40: P5 h=.05→30.5, P25 32.5, P50 35, P75 37.5, P95 39.5.
		{"one group per size", "bare", 4, []analysis.Bin{
			{Lo: 10, Hi: 10, N: 5, P5: 1.2, P25: 2, Median: 3, P75: 4, P95: 4.8},
			{Lo: 20, Hi: 20, N: 1, P5: 10, P25: 10, Median: 10, P75: 10, P95: 10},
			{Lo: 30, Hi: 30, N: 1, P5: 20, P25: 20, Median: 20, P75: 20, P95: 20},
			{Lo: 40, Hi: 40, N: 2, P5: 30.5, P25: 32.5, Median: 35, P75: 37.5, P95: 39.5},
		}},
		// n=3: sizes 0..1, 1..2, 2..4 of the four: [10], [20], [30, 40].
		{"unequal split", "bare", 3, []analysis.Bin{
			{Lo: 10, Hi: 10, N: 5, P5: 1.2, P25: 2, Median: 3, P75: 4, P95: 4.8},
			{Lo: 20, Hi: 20, N: 1, P5: 10, P25: 10, Median: 10, P75: 10, P95: 10},
			{Lo: 30, Hi: 40, N: 3, P5: 21, P25: 25, Median: 30, P75: 35, P95: 39},
		}},
		// bridge 2, 4 at size 10 (given unsorted): P5 2.1, P25 2.5, P50 3, P75 3.5, P95 3.9;
		// it has no size 20 or 40, so the sizes of every series make the groups.
		{"two values", "bridge", 2, []analysis.Bin{
			{Lo: 10, Hi: 20, N: 2, P5: 2.1, P25: 2.5, Median: 3, P75: 3.5, P95: 3.9},
			{Lo: 30, Hi: 40, N: 1, P5: 50, P25: 50, Median: 50, P75: 50, P95: 50},
		}},
		{"more groups asked than sizes", "bridge", 100, []analysis.Bin{
			{Lo: 10, Hi: 10, N: 2, P5: 2.1, P25: 2.5, Median: 3, P75: 3.5, P95: 3.9},
			{Lo: 20, Hi: 20, P5: nan, P25: nan, Median: nan, P75: nan, P95: nan},
			{Lo: 30, Hi: 30, N: 1, P5: 50, P25: 50, Median: 50, P75: 50, P95: 50},
			{Lo: 40, Hi: 40, P5: nan, P25: nan, Median: nan, P75: nan, P95: nan},
		}},
		{"unknown series", "nope", 1, []analysis.Bin{{Lo: 10, Hi: 40, P5: nan, P25: nan, Median: nan, P75: nan, P95: nan}}},
		{"no bins", "bare", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := d.Bins(tt.series, lm, tt.n)
			if !binsEqual(got, tt.want) {
				t.Errorf("Bins(%q, %d) =\n%+v\nwant\n%+v", tt.series, tt.n, got, tt.want)
			}
		})
	}
	// A literal Dataset (no cache) gives the same bins as a cached one, twice.
	lit := analysis.Dataset{Series: d.Series, Reference: d.Reference, OK: d.OK, Failed: d.Failed, MaxSize: d.MaxSize}
	if a, b := d.Bins("bare", lm, 3), lit.Bins("bare", lm, 3); !binsEqual(a, b) || !binsEqual(a, d.Bins("bare", lm, 3)) {
		t.Errorf("cached and literal datasets differ:\n%+v\n%+v", a, b)
	}
}

func binsEqual(a, b []analysis.Bin) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.N != y.N || !near(x.Lo, y.Lo) || !near(x.Hi, y.Hi) || !near(x.P5, y.P5) || !near(x.P25, y.P25) ||
			!near(x.Median, y.Median) || !near(x.P75, y.P75) || !near(x.P95, y.P95) {
			return false
		}
	}
	return true
}

// TestBinsHugeSizes: a stored run may hold any int size; grouping must
// keep every sample, in size order, without overflowing.
func TestBinsHugeSizes(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int
		n     int
		want  []int // N per group
	}{
		{"max int", []int{1, math.MaxInt64 / 2, math.MaxInt64}, 4, []int{1, 1, 1}},
		{"max int, two groups", []int{1, math.MaxInt64 / 2, math.MaxInt64}, 2, []int{1, 2}},
		{"max int, many bins", []int{math.MaxInt64, math.MaxInt64 - 1}, 10000, []int{1, 1}},
		{"negative size", []int{-5, 10}, 2, []int{1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := analysis.NewDataset([]string{"a"}, map[string][]record.Sample{"a": func() []record.Sample {
				var out []record.Sample
				for _, s := range tc.sizes {
					out = append(out, record.Sample{Size: s, Length: s, Code: 200, DurationMS: 1})
				}
				return out
			}()}, "a")
			bins := d.Bins("a", metric(t, "latency"), tc.n)
			total := 0
			for i, b := range bins {
				total += b.N
				if b.Lo > b.Hi || (i > 0 && b.Lo < bins[i-1].Hi) { // float64 may round two huge sizes to one
					t.Errorf("group %d: [%g, %g] after %g", i, b.Lo, b.Hi, bins[max(i-1, 0)].Hi)
				}
				if i < len(tc.want) && b.N != tc.want[i] {
					t.Errorf("group %d: N %d, want %d", i, b.N, tc.want[i])
				}
			}
			if total != len(tc.sizes) || len(bins) != len(tc.want) {
				t.Errorf("%d groups holding %d samples, want %d holding %d", len(bins), total, len(tc.want), len(tc.sizes))
			}
			d.SmallBig(metric(t, "latency"), 3*87380, tc.n)
			d.Summary(metric(t, "latency"), 2, tc.n)
		})
	}
}

func TestSmoothBins(t *testing.T) {
	nan := math.NaN()
	// bin(i, v): quantiles v, v+1, ..., v+4 so that each field is checked.
	bin := func(lo float64, n int, v float64) analysis.Bin {
		if n == 0 {
			return analysis.Bin{Lo: lo, Hi: lo + 10, P5: nan, P25: nan, Median: nan, P75: nan, P95: nan}
		}
		return analysis.Bin{Lo: lo, Hi: lo + 10, N: n, P5: v, P25: v + 1, Median: v + 2, P75: v + 3, P95: v + 4}
	}
	in := []analysis.Bin{bin(0, 1, 1), bin(10, 0, 0), bin(20, 1, 3), bin(30, 2, 8)}
	orig := slices.Clone(in)
	tests := []struct {
		window int
		want   []analysis.Bin
	}{
		{0, in},
		{1, in},
		// ±1: bin0 = mean(bin0) = 1 (bin1 empty); bin1 stays empty; bin2 = mean(3, 8) = 5.5; bin3 = mean(3, 8) = 5.5.
		{3, []analysis.Bin{bin(0, 1, 1), bin(10, 0, 0), bin(20, 1, 5.5), bin(30, 2, 5.5)}},
		// ±2: bin0 = mean(1, 3) = 2; bin2 = mean(1, 3, 8) = 4; bin3 = mean(3, 8) = 5.5.
		{5, []analysis.Bin{bin(0, 1, 2), bin(10, 0, 0), bin(20, 1, 4), bin(30, 2, 5.5)}},
		{4, []analysis.Bin{bin(0, 1, 2), bin(10, 0, 0), bin(20, 1, 4), bin(30, 2, 5.5)}},
	}
	for _, tt := range tests {
		if got := analysis.SmoothBins(in, tt.window); !binsEqual(got, tt.want) {
			t.Errorf("SmoothBins(window %d) =\n%+v\nwant\n%+v", tt.window, got, tt.want)
		}
	}
	if !binsEqual(in, orig) {
		t.Error("SmoothBins modified its input")
	}
}

func lossEqual(a, b []analysis.LossBin) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].N != b[i].N || a[i].RefN != b[i].RefN || !near(a[i].Lo, b[i].Lo) || !near(a[i].Hi, b[i].Hi) || !near(a[i].Ratio, b[i].Ratio) {
			return false
		}
	}
	return true
}

func TestLoss(t *testing.T) {
	d := fixture(t)
	lm := metric(t, "latency")
	nan := math.NaN()
	noRef := d
	noRef.Reference = ""
	tests := []struct {
		name   string
		d      analysis.Dataset
		series string
		n      int
		want   []analysis.LossBin
	}{
		// bridge/bare: [10,20] median(2,4)=3 / median(1..5, 10)=3.5; [30,40] 50 / median(20,30,40)=30.
		{"two groups", d, "bridge", 2, []analysis.LossBin{{Lo: 10, Hi: 20, Ratio: 3 / 3.5, N: 2, RefN: 6}, {Lo: 30, Hi: 40, Ratio: 5.0 / 3, N: 1, RefN: 3}}},
		// One group per size: 10: 3/3; 20: bridge has none; 30: 50/20; 40: bridge has none.
		{"one group per size", d, "bridge", 4, []analysis.LossBin{
			{Lo: 10, Hi: 10, Ratio: 1, N: 2, RefN: 5}, {Lo: 20, Hi: 20, Ratio: nan, N: 0, RefN: 1},
			{Lo: 30, Hi: 30, Ratio: 2.5, N: 1, RefN: 1}, {Lo: 40, Hi: 40, Ratio: nan, N: 0, RefN: 2}}},
		// overlay/bare: 6/3.5; 100/30.
		{"overlay", d, "overlay", 2, []analysis.LossBin{{Lo: 10, Hi: 20, Ratio: 6 / 3.5, N: 1, RefN: 6}, {Lo: 30, Hi: 40, Ratio: 10.0 / 3, N: 1, RefN: 3}}},
		{"reference itself", d, "bare", 1, []analysis.LossBin{{Lo: 10, Hi: 40, Ratio: 1, N: 9, RefN: 9}}},
		{"no reference", noRef, "bridge", 2, []analysis.LossBin{{Lo: 10, Hi: 20, Ratio: nan, N: 2}, {Lo: 30, Hi: 40, Ratio: nan, N: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.Loss(tt.series, lm, tt.n); !lossEqual(got, tt.want) {
				t.Errorf("Loss(%q, %d) =\n%+v\nwant\n%+v", tt.series, tt.n, got, tt.want)
			}
		})
	}
}

func TestImpacts(t *testing.T) {
	lm := metric(t, "latency")
	type imp struct {
		name, over, under string
		median            float64
	}
	tests := []struct {
		name    string
		samples map[string][]record.Sample
		series  []string
		groups  int // size groups of 2 asked for: one per size here
		want    []imp
	}{
		// container: bridge/bare = 1 (sizes 10: 3/3), 2 (size 40: 20/10) → median 1.5.
		// overlay (SDN): overlay/bridge = 2 (6/3), 2 (40/20) → 2. No encrypted or userspace overlay.
		{"one run", map[string][]record.Sample{
			"bare":    cat(lat(10, 1, 3, 5), lat(40, 10)),
			"bridge":  cat(lat(10, 3), lat(40, 20)),
			"overlay": cat(lat(10, 6), lat(40, 40)),
			"host":    lat(10, 1),
		}, []string{"bare", "host", "bridge", "overlay"}, 2, []imp{
			{"container", "bridge", "bare", 1.5},
			{"overlay (SDN)", "overlay", "bridge", 2},
		}},
		// All four layers; every sample has size 40: one group.
		{"every layer", map[string][]record.Sample{
			"bare":              lat(40, 1),
			"bridge":            lat(40, 2),
			"overlay":           lat(40, 8),
			"overlay-encrypted": lat(40, 10),
			"overlay-userspace": lat(40, 5),
		}, []string{"bare", "bridge", "overlay", "overlay-encrypted", "overlay-userspace"}, 1, []imp{
			{"container", "bridge", "bare", 2},
			{"overlay (SDN)", "overlay", "bridge", 4},
			{"encryption", "overlay-encrypted", "overlay", 1.25},
			{"overlay-userspace", "overlay-userspace", "bridge", 2.5},
		}},
		// Several runs: match within a run only. Run b has overlay but no
		// bridge; run c has bridge but no bare; bridge in run d failed.
		{"several runs", map[string][]record.Sample{
			"bare · a":    lat(40, 2),
			"bridge · a":  lat(40, 3),
			"overlay · b": lat(40, 9),
			"bridge · c":  lat(40, 4),
			"bare · d":    lat(40, 1),
			"bridge · d":  {{Size: 40, Code: 503}},
		}, []string{"bare · a", "bridge · a", "overlay · b", "bridge · c", "bare · d", "bridge · d"}, 1, []imp{
			{"container · a", "bridge · a", "bare · a", 1.5},
		}},
		{"nothing", map[string][]record.Sample{"bare": lat(40, 1), "host": lat(40, 1)}, []string{"bare", "host"}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := analysis.NewDataset(tt.series, tt.samples, "")
			got := d.Impacts(lm, 2)
			var g []imp
			for _, x := range got {
				g = append(g, imp{x.Name, x.Over, x.Under, x.Median})
				if len(x.Bins) != tt.groups || x.Formula == "" {
					t.Errorf("%s: %d bins, formula %q", x.Name, len(x.Bins), x.Formula)
				}
			}
			if len(g) != len(tt.want) {
				t.Fatalf("Impacts = %+v, want %+v", g, tt.want)
			}
			for i := range g {
				if g[i].name != tt.want[i].name || g[i].over != tt.want[i].over || g[i].under != tt.want[i].under || !near(g[i].median, tt.want[i].median) {
					t.Errorf("impact %d = %+v, want %+v", i, g[i], tt.want[i])
				}
			}
		})
	}
	// The bins are the ratio of the two series' group medians.
	d := fixture(t)
	im := d.Impacts(lm, 2)
	want := []analysis.LossBin{{Lo: 10, Hi: 20, Ratio: 2, N: 1, RefN: 2}, {Lo: 30, Hi: 40, Ratio: 2, N: 1, RefN: 1}} // overlay/bridge: 6/3, 100/50
	if len(im) != 2 || !lossEqual(im[1].Bins, want) || im[1].Formula != "latency_overlay(m) / latency_bridge(m) (Kratzke 2015 eq. 4)" {
		t.Errorf("Impacts(fixture) = %+v", im)
	}
}

func TestSmallBig(t *testing.T) {
	d := fixture(t)
	lm := metric(t, "latency")
	nan := math.NaN()
	noRef := d
	noRef.Reference = ""
	// With 40 bins over [0, 40] every size has its own bin (40 shares the
	// closed last bin with 39). Bin medians: bare 10: 3, 20: 10, 30: 20,
	// 40: 35; bridge 10: 3, 30: 50; overlay 10: 6, 40: 100.
	tests := []struct {
		name     string
		d        analysis.Dataset
		split, n int
		want     []analysis.SplitRow
	}{
		// Pooled, bridge's small half (2 4) against bare's (1 2 3 4 5 10)
		// would give 3/3.5: bare's size 20 has no counterpart in bridge.
		{"split 30", d, 30, 40, []analysis.SplitRow{
			{Series: "bare", SmallN: 6, BigN: 3, Small: 1, Big: 1, SmallBins: 2, BigBins: 2},
			{Series: "bridge", SmallN: 2, BigN: 1, Small: 1, Big: 2.5, SmallBins: 1, BigBins: 1},
			{Series: "overlay", SmallN: 1, BigN: 1, Small: 2, Big: 100.0 / 35, SmallBins: 1, BigBins: 1},
		}},
		{"split 11", d, 11, 40, []analysis.SplitRow{
			{Series: "bare", SmallN: 5, BigN: 4, Small: 1, Big: 1, SmallBins: 1, BigBins: 3},
			{Series: "bridge", SmallN: 2, BigN: 1, Small: 1, Big: 2.5, SmallBins: 1, BigBins: 1},
			{Series: "overlay", SmallN: 1, BigN: 1, Small: 2, Big: 100.0 / 35, SmallBins: 1, BigBins: 1},
		}},
		// Everything small: the median of the bins' ratios.
		{"all small", d, 41, 40, []analysis.SplitRow{
			{Series: "bare", SmallN: 9, Small: 1, Big: nan, SmallBins: 4},
			{Series: "bridge", SmallN: 3, Small: (1 + 2.5) / 2, Big: nan, SmallBins: 2},
			{Series: "overlay", SmallN: 2, Small: (2 + 100.0/35) / 2, Big: nan, SmallBins: 2},
		}},
		// Split 0: everything big, counted and compared alike.
		{"all big", d, 0, 40, []analysis.SplitRow{
			{Series: "bare", BigN: 9, Small: nan, Big: 1, BigBins: 4},
			{Series: "bridge", BigN: 3, Small: nan, Big: (1 + 2.5) / 2, BigBins: 2},
			{Series: "overlay", BigN: 2, Small: nan, Big: (2 + 100.0/35) / 2, BigBins: 2},
		}},
		// 4 bins of 10: [30, 40] straddles split 35 and is cut in two, so
		// size 30 is compared on the small side and 40 on the big side.
		{"a bin cut at the split", d, 35, 4, []analysis.SplitRow{
			{Series: "bare", SmallN: 7, BigN: 2, Small: 1, Big: 1, SmallBins: 3, BigBins: 1},
			{Series: "bridge", SmallN: 3, BigN: 0, Small: (1 + 2.5) / 2, Big: nan, SmallBins: 2},
			{Series: "overlay", SmallN: 1, BigN: 1, Small: 2, Big: 100.0 / 35, SmallBins: 1, BigBins: 1},
		}},
		{"no bins", d, 30, 0, []analysis.SplitRow{
			{Series: "bare", SmallN: 6, BigN: 3, Small: nan, Big: nan},
			{Series: "bridge", SmallN: 2, BigN: 1, Small: nan, Big: nan},
			{Series: "overlay", SmallN: 1, BigN: 1, Small: nan, Big: nan},
		}},
		{"no reference", noRef, 30, 40, []analysis.SplitRow{
			{Series: "bare", SmallN: 6, BigN: 3, Small: nan, Big: nan},
			{Series: "bridge", SmallN: 2, BigN: 1, Small: nan, Big: nan},
			{Series: "overlay", SmallN: 1, BigN: 1, Small: nan, Big: nan},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.d.SmallBig(lm, tt.split, tt.n)
			ok := len(got) == len(tt.want)
			for i := 0; ok && i < len(got); i++ {
				g, w := got[i], tt.want[i]
				ok = g.Series == w.Series && g.SmallN == w.SmallN && g.BigN == w.BigN && near(g.Small, w.Small) && near(g.Big, w.Big) &&
					g.SmallBins == w.SmallBins && g.BigBins == w.BigBins
			}
			if !ok {
				t.Errorf("SmallBig(%d, %d) =\n%+v\nwant\n%+v", tt.split, tt.n, got, tt.want)
			}
		})
	}
}

// sameSpeed is two modes at exactly the same speed, transfer rate growing
// with the size as on a real path (1 ms per exchange plus 10 MB/s), where
// "host" lost its smaller sizes (failed cells) or drew other sizes
// (imported ppbench data): the pooled medians differ, the speed does not.
func sameSpeed(t *testing.T) analysis.Dataset {
	t.Helper()
	at := func(sizes ...int) []record.Sample {
		var out []record.Sample
		for _, s := range sizes {
			d := 1 + float64(s)/10000
			out = append(out, record.Sample{Workload: "pingpong", Size: s, Length: s, Code: 200, DurationMS: d, LatencyMS: d + 1})
		}
		return out
	}
	var bare, host []int
	for s := 500; s < 100000; s += 1000 { // mid-bin: 100 bins of about 995 bytes
		bare = append(bare, s)
		if s > 30000 || (s/1000)%3 == 0 { // host: two thirds of the sizes up to 30 kB failed
			host = append(host, s+7) // and drew sizes a little apart from bare's
		}
	}
	d, warns := analysis.NewDataset([]string{"bare", "host"}, map[string][]record.Sample{"bare": at(bare...), "host": at(host...)}, "bare")
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	return d
}

// TestUnlikeSizes: where two modes measured different sizes, every ratio
// to the reference must compare like sizes. The pooled answers (what
// SmallBig, Summary and PingPong used to give) are checked to be wrong
// here, so the test fails if the data stops showing the bias.
func TestUnlikeSizes(t *testing.T) {
	d := sameSpeed(t)
	const split = 50000
	for _, key := range []string{"transfer", "latency", "rps", "outer"} {
		m := metric(t, key)
		t.Run(key, func(t *testing.T) {
			// The pooled small-message ratio is off by more than 5 %.
			var pooled [2][]float64
			for i, s := range []string{"bare", "host"} {
				for _, smp := range d.OK[s] {
					if smp.Size < split {
						pooled[i] = append(pooled[i], m.Value(smp))
					}
				}
			}
			if r := stats.Median(pooled[1]) / stats.Median(pooled[0]); math.Abs(r-1) < 0.05 {
				t.Fatalf("pooled small ratio %.3f: the fixture shows no bias", r)
			}
			sb := d.SmallBig(m, split, 100)
			if h := sb[1]; math.Abs(h.Small-1) > 0.01 || math.Abs(h.Big-1) > 0.01 || h.SmallBins == 0 || h.BigBins == 0 {
				t.Errorf("SmallBig host = %+v, want ratios within 1 %% of 1", h)
			}
			if p := d.PairedRatio("host", "bare", m, 100); math.Abs(p.Ratio-1) > 0.01 {
				t.Errorf("PairedRatio = %+v, want within 1 %% of 1", p)
			}
			for _, c := range []analysis.Change{d.Summary(m, 2, 100)[1].Median, d.Summary(m, 2, 100)[1].Mean} {
				if math.Abs(c.Percent) > 1 || c.Class != "same" {
					t.Errorf("Summary host change %+v, want within 1 %% and \"same\"", c)
				}
			}
		})
	}
	// The summary table's ratios, from samples by mode.
	var all []record.Sample
	for _, s := range d.Series {
		for _, smp := range d.OK[s] {
			smp.Mode = s
			all = append(all, smp)
		}
	}
	rows := analysis.NewPingPongSet(all, nil, d.Series).Rows("bare")
	for _, r := range []float64{rows[1].TransferRatio, rows[1].InnerRatio, rows[1].LatencyRatio} {
		if math.Abs(r-1) > 0.01 {
			t.Errorf("PingPong host row %+v: ratios want within 1 %% of 1", rows[1])
		}
	}
	if pooled := rows[1].TransferMBs / rows[0].TransferMBs; math.Abs(pooled-1) < 0.02 {
		t.Errorf("pooled transfer ratio %.3f: the fixture shows no bias", pooled)
	}
}

func TestSummary(t *testing.T) {
	// a (reference): 2 4 6 → min 2, max 6, mean 4, median 4, SD 2, P5 2.2 (h=.1), P95 5.8 (h=1.9).
	// b: 1 5 9 → min 1 (-50 %), max 9 (+50 %), mean 5 (+25 %), median 5 (+25 %), SD 4 (+100 %),
	//    P5 1.4 (-36.36 %), P95 8.6 (+48.28 %).
	// c: 2 4 6 → 0 % everywhere. e: 7 → SD NaN.
	samples := map[string][]record.Sample{
		"a": lat(10, 2, 4, 6), "b": lat(10, 9, 1, 5), "c": lat(10, 6, 4, 2), "e": lat(10, 7),
	}
	d, _ := analysis.NewDataset([]string{"a", "b", "c", "e"}, samples, "a")
	lower := metric(t, "latency")
	higher := analysis.Metric{Key: "test-higher", HigherIsBetter: true, Value: func(s record.Sample) float64 { return s.DurationMS }}
	nan := math.NaN()
	ch := func(v, p float64, class string) analysis.Change {
		return analysis.Change{Value: v, Percent: p, Class: class}
	}
	pP5, pP95 := (1.4-2.2)/2.2*100, (8.6-5.8)/5.8*100
	type row = analysis.SummaryRow
	refRow := row{Series: "a", N: 3, Min: ch(2, 0, "ref"), Max: ch(6, 0, "ref"), Mean: ch(4, 0, "ref"), Median: ch(4, 0, "ref"),
		SD: ch(2, 0, "ref"), P5: ch(2.2, 0, "ref"), P95: ch(5.8, 0, "ref")}
	cRow := row{Series: "c", N: 3, Min: ch(2, 0, "same"), Max: ch(6, 0, "same"), Mean: ch(4, 0, "same"), Median: ch(4, 0, "same"),
		SD: ch(2, 0, "same"), P5: ch(2.2, 0, "same"), P95: ch(5.8, 0, "same")}
	// e: 7 vs min 2 +250 %, max 6 +16.67 %, mean 4 +75 %, median 4 +75 %, P5 2.2 +218.18 %, P95 5.8 +20.69 %.
	// class: of the changes >= 25 %; small: of max and P95 (< 25 %).
	eRow := func(class, small string) row {
		return row{Series: "e", N: 1, Min: ch(7, 250, class), Max: ch(7, 100.0/6, small), Mean: ch(7, 75, class), Median: ch(7, 75, class),
			SD: ch(nan, nan, ""), P5: ch(7, (7-2.2)/2.2*100, class), P95: ch(7, (7-5.8)/5.8*100, small)}
	}
	tests := []struct {
		name string
		d    analysis.Dataset
		m    analysis.Metric
		same float64
		b    row
		e    row
	}{
		{"lower is better", d, lower, 1,
			row{Series: "b", N: 3, Min: ch(1, -50, "better"), Max: ch(9, 50, "worse"), Mean: ch(5, 25, "worse"), Median: ch(5, 25, "worse"),
				SD: ch(4, 100, "worse"), P5: ch(1.4, pP5, "better"), P95: ch(8.6, pP95, "worse")}, eRow("worse", "worse")},
		{"higher is better; SD still lower is better", d, higher, 1,
			row{Series: "b", N: 3, Min: ch(1, -50, "worse"), Max: ch(9, 50, "better"), Mean: ch(5, 25, "better"), Median: ch(5, 25, "better"),
				SD: ch(4, 100, "worse"), P5: ch(1.4, pP5, "worse"), P95: ch(8.6, pP95, "better")}, eRow("better", "better")},
		// same = 25: |+25 %| >= 25 is still a change; same = 40: 25 % and 36 % are "same".
		{"threshold at 25", d, higher, 25,
			row{Series: "b", N: 3, Min: ch(1, -50, "worse"), Max: ch(9, 50, "better"), Mean: ch(5, 25, "better"), Median: ch(5, 25, "better"),
				SD: ch(4, 100, "worse"), P5: ch(1.4, pP5, "worse"), P95: ch(8.6, pP95, "better")}, eRow("better", "same")},
		{"threshold at 40", d, lower, 40,
			row{Series: "b", N: 3, Min: ch(1, -50, "better"), Max: ch(9, 50, "worse"), Mean: ch(5, 25, "same"), Median: ch(5, 25, "same"),
				SD: ch(4, 100, "worse"), P5: ch(1.4, pP5, "same"), P95: ch(8.6, pP95, "worse")},
			eRow("worse", "same")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.d.Summary(tt.m, tt.same, 100)
			want := []row{refRow, tt.b, cRow, tt.e}
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			for i := range want {
				if !rowEqual(got[i], want[i]) {
					t.Errorf("row %d =\n%+v\nwant\n%+v", i, got[i], want[i])
				}
			}
		})
	}
	// Without a reference: values only, Percent NaN, Class "".
	noRef := d
	noRef.Reference = ""
	got := noRef.Summary(lower, 1, 100)
	want := row{Series: "b", N: 3, Min: ch(1, nan, ""), Max: ch(9, nan, ""), Mean: ch(5, nan, ""), Median: ch(5, nan, ""),
		SD: ch(4, nan, ""), P5: ch(1.4, nan, ""), P95: ch(8.6, nan, "")}
	if !rowEqual(got[1], want) || got[0].Mean.Class != "" {
		t.Errorf("no reference: %+v, want %+v", got[1], want)
	}
}

func rowEqual(a, b analysis.SummaryRow) bool {
	if a.Series != b.Series || a.N != b.N {
		return false
	}
	x := []analysis.Change{a.Min, a.Max, a.Mean, a.Median, a.SD, a.P5, a.P95}
	y := []analysis.Change{b.Min, b.Max, b.Mean, b.Median, b.SD, b.P5, b.P95}
	for i := range x {
		if !near(x[i].Value, y[i].Value) || !near(x[i].Percent, y[i].Percent) || x[i].Class != y[i].Class {
			return false
		}
	}
	return true
}

func TestDeviation(t *testing.T) {
	nan := math.NaN()
	samples := map[string][]record.Sample{
		// size 100: 1 2 3 → SD 1, mean 2 → 50 %; size 200: 10 10 → 0 %; size 300: one value, left out.
		"a": cat(lat(100, 1, 2, 3), lat(200, 10, 10), lat(300, 7)),
		// size 100: 2 4 6 → SD 2 / mean 4 = 50 %; size 200: 1 3 → SD √2 / 2 = 70.71 %.
		"b": cat(lat(100, 2, 6, 4), lat(200, 3, 1), []record.Sample{{Size: 100, Code: 503}}),
		"c": cat(lat(100, 1), lat(200, 1)), // no size with two samples
	}
	d, _ := analysis.NewDataset([]string{"a", "b", "c"}, samples, "a")
	want := []analysis.DeviationRow{
		{Series: "a", Samples: 6, Bytes: 3*100 + 2*200 + 300, Sizes: 2, MinRSD: 0, AvgRSD: 25, MaxRSD: 50},
		{Series: "b", Samples: 5, Bytes: 3*100 + 2*200, Sizes: 2, MinRSD: 50, AvgRSD: (50 + 50*math.Sqrt2) / 2, MaxRSD: 50 * math.Sqrt2},
		{Series: "c", Samples: 2, Bytes: 300, Sizes: 0, MinRSD: nan, AvgRSD: nan, MaxRSD: nan},
	}
	got := d.Deviation(metric(t, "latency"))
	if len(got) != len(want) {
		t.Fatalf("Deviation = %+v", got)
	}
	for i, w := range want {
		g := got[i]
		if g.Series != w.Series || g.Samples != w.Samples || g.Bytes != w.Bytes || g.Sizes != w.Sizes ||
			!near(g.MinRSD, w.MinRSD) || !near(g.AvgRSD, w.AvgRSD) || !near(g.MaxRSD, w.MaxRSD) {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
	}
}

// bigDataset has 200,000 samples over five modes and 100 sizes up to 500 kB.
func bigDataset() (analysis.Dataset, []string) {
	r := rand.New(rand.NewSource(1))
	modes := []string{"bare", "host", "bridge", "overlay", "overlay-encrypted"}
	samples := map[string][]record.Sample{}
	for i := range 200000 {
		m := modes[i%len(modes)]
		size := (1 + r.Intn(100)) * 5000
		dur := float64(size)/50000 + r.ExpFloat64()
		samples[m] = append(samples[m], record.Sample{Mode: m, Size: size, Length: size, Code: 200, DurationMS: dur, LatencyMS: dur + 0.5})
	}
	return analysis.NewDataset(modes, samples, "bare")
}

// everything computes what the report needs from d.
func everything(d analysis.Dataset) {
	for _, m := range analysis.PingPongMetrics() {
		for _, s := range d.Series {
			analysis.SmoothBins(d.Bins(s, m, 100), 5)
			d.Loss(s, m, 100)
		}
		d.Impacts(m, 100)
		d.SmallBig(m, 3*87380, 100)
		d.Summary(m, 1, 100)
		d.Deviation(m)
	}
}

func TestLargeDataset(t *testing.T) {
	if testing.Short() {
		t.Skip("large data set")
	}
	d, _ := bigDataset()
	everything(d) // must finish; the benchmark measures it
	if got := d.Summary(metric(t, "latency"), 1, 100); got[0].N != 40000 {
		t.Errorf("N = %d, want 40000", got[0].N)
	}
}

func BenchmarkReportStats200k(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		d, _ := bigDataset()
		b.StartTimer()
		everything(d)
	}
}

func ExampleSplitSeries() {
	mode, run := analysis.SplitSeries("bridge · run2")
	fmt.Printf("%q %q\n", mode, run)
	mode, run = analysis.SplitSeries("bridge")
	fmt.Printf("%q %q\n", mode, run)
	// Output:
	// "bridge" "run2"
	// "bridge" ""
}
