package analysis_test

import (
	"math"
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
)

// abSizes are apachebench's message sizes: 10, 20, …, 90, 100, 200, …,
// 900 000, 1 000 000 bytes, nine per decade (46 sizes).
func abSizes() []int {
	var out []int
	for p := 10; p <= 100000; p *= 10 {
		for k := 1; k <= 9; k++ {
			out = append(out, k*p)
		}
	}
	return append(out, 1000000)
}

// overlayShare is the fixture's overlay transfer rate over bare's at a
// size: 0.55 up to 10 kB, then rising with the logarithm of the size to
// 0.95 at 1 MB, as a user-space overlay does.
func overlayShare(size int) float64 {
	if size <= 10000 {
		return 0.55
	}
	return 0.55 + 0.40*(math.Log10(float64(size))-4)/2
}

// logSpaced is one ab row per mode and size (each row one sample, as an
// import makes them): bare at 0.5 ms plus 100 MB/s, the overlay at
// overlayShare of bare's transfer rate.
func logSpaced(t *testing.T, reps int) analysis.Dataset {
	t.Helper()
	samples := map[string][]record.Sample{}
	for _, s := range abSizes() {
		bare := 0.5 + float64(s)/1e5 // ms
		for r := range reps {
			jitter := 1 + 0.01*float64(r) // repetitions differ a little, alike in both modes
			samples["bare"] = append(samples["bare"], record.Sample{Mode: "bare", Size: s, Length: s, Code: 200, DurationMS: bare * jitter})
			samples["overlay"] = append(samples["overlay"], record.Sample{Mode: "overlay", Size: s, Length: s, Code: 200, DurationMS: bare * jitter / overlayShare(s)})
		}
	}
	d, warns := analysis.NewDataset([]string{"bare", "overlay"}, samples, "bare")
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	return d
}

// equalWidthSmall is the small-message ratio the report used to give: n
// equal-width bins over [0, largest size], per bin the overlay's median
// over bare's, the median over the bins below split. The test keeps it to
// show that the fixture catches the bias.
func equalWidthSmall(d analysis.Dataset, m analysis.Metric, split, n int) float64 {
	bin := func(size int) int { return min(size*n/d.MaxSize, n-1) }
	var ov, ref = map[int][]float64{}, map[int][]float64{}
	for _, p := range []struct {
		s string
		m map[int][]float64
	}{{"overlay", ov}, {"bare", ref}} {
		for _, smp := range d.OK[p.s] {
			if smp.Size < split {
				p.m[bin(smp.Size)] = append(p.m[bin(smp.Size)], m.Value(smp))
			}
		}
	}
	var rs []float64
	for b, v := range ov {
		slices.Sort(v)
		w := ref[b]
		slices.Sort(w)
		rs = append(rs, stats.Quantile(v, 0.5)/stats.Quantile(w, 0.5))
	}
	return stats.Median(rs)
}

// TestLogSpacedSizes: on ab's log-spaced sizes the small-message ratio is
// the median of the per-size ratios (each measured size one point), not
// the median of equal-width bins, where every size below a hundredth of
// the largest shares the first bin and the 10 kB–260 kB sizes make the
// answer.
func TestLogSpacedSizes(t *testing.T) {
	const split = 3 * 87380 // the papers' split: 3 × ppbench's receive window
	tm := metric(t, "transfer")
	var perSize []float64 // overlay / bare per size below the split: the answer
	for _, s := range abSizes() {
		if s < split {
			perSize = append(perSize, overlayShare(s))
		}
	}
	want := stats.Median(perSize)
	if math.Abs(want-0.55) > 1e-9 {
		t.Fatalf("fixture: per-size median %.3f, want 0.55", want)
	}
	for _, reps := range []int{1, 5} { // ab: one row per size; ppbench: repetitions
		d := logSpaced(t, reps)
		if old := equalWidthSmall(d, tm, split, 100); math.Abs(old-want) < 0.05 {
			t.Fatalf("equal-width bins give %.3f, near the per-size %.3f: the fixture shows no bias", old, want)
		}
		g := d.Grouping(100)
		if !g.PerSize() || g.Sizes != 46 || g.Groups != 46 || !g.Shared {
			t.Errorf("Grouping(100) = %+v, want one group per size, 46 sizes", g)
		}
		row := d.SmallBig(tm, split, 100)[1]
		if !near(row.Small, want) || row.SmallBins != len(perSize) || row.SmallN != reps*len(perSize) {
			t.Errorf("reps %d: SmallBig small = %.4f over %d groups (%d samples), want the per-size median %.4f over %d",
				reps, row.Small, row.SmallBins, row.SmallN, want, len(perSize))
		}
		// Big messages: 300 kB … 1 MB, eight sizes.
		var big []float64
		for _, s := range abSizes() {
			if s >= split {
				big = append(big, overlayShare(s))
			}
		}
		if !near(row.Big, stats.Median(big)) || row.BigBins != len(big) {
			t.Errorf("reps %d: SmallBig big = %.4f over %d groups, want %.4f over %d", reps, row.Big, row.BigBins, stats.Median(big), len(big))
		}
		// The summary's ratio: the median over all sizes.
		var all []float64
		for _, s := range abSizes() {
			all = append(all, overlayShare(s))
		}
		if p := d.PairedRatio("overlay", "bare", tm, analysis.DefaultBins); !near(p.Ratio, stats.Median(all)) || p.Groups != 46 {
			t.Errorf("reps %d: PairedRatio = %+v, want %.4f over 46 sizes", reps, p, stats.Median(all))
		}
		// Fewer groups than sizes: groups of equally many sizes keep the
		// weighting; six of the eight small groups lie below 10 kB.
		if r := d.SmallBig(tm, split, 10)[1]; math.Abs(r.Small-want) > 0.01 {
			t.Errorf("reps %d: 10 groups: small = %.4f, want within 0.01 of %.4f", reps, r.Small, want)
		}
	}
}

// TestGrouping pins the grouping rule: at most n groups of equally many
// distinct sizes; one per size when there are at most n; fewer when two
// series measured no size in common.
func TestGrouping(t *testing.T) {
	at := func(sizes ...int) []record.Sample {
		var out []record.Sample
		for _, s := range sizes {
			out = append(out, record.Sample{Size: s, Length: s, Code: 200, DurationMS: 1})
		}
		return out
	}
	tests := []struct {
		name    string
		samples map[string][]record.Sample
		n       int
		groups  int
		shared  bool
		lo      []float64 // each group's smallest size
	}{
		{"shared sizes, fewer than n: one per size", map[string][]record.Sample{"a": at(10, 20, 30), "b": at(10, 30, 30)}, 100, 3, true, []float64{10, 20, 30}},
		{"shared sizes, more than n: equal counts", map[string][]record.Sample{"a": at(1, 2, 3, 1000, 2000, 3000), "b": at(1, 2, 3, 1000, 2000, 3000)}, 2, 2, true, []float64{1, 1000}},
		{"seven sizes in three groups: 2, 2, 3", map[string][]record.Sample{"a": at(1, 2, 3, 4, 5, 6, 7)}, 3, 3, true, []float64{1, 3, 5}},
		// No size in common: groups of about one size per series.
		{"sizes drawn apart", map[string][]record.Sample{"a": at(10, 30, 50, 70), "b": at(11, 31, 51, 71)}, 100, 4, false, []float64{10, 30, 50, 70}},
		// Two runs of other plans: each run's modes share sizes, the runs
		// none; 8 sizes, 4 series: 2 groups, each with sizes of both runs.
		{"two runs, other sizes", map[string][]record.Sample{"a": at(10, 20, 30, 40), "b": at(10, 20, 30, 40), "c": at(11, 21, 31, 41), "d": at(11, 21, 31, 41)},
			100, 2, false, []float64{10, 30}},
		// One size in common is enough to pair size by size.
		{"one size in common", map[string][]record.Sample{"a": at(1000, 2000, 4000), "b": at(1000, 3000)}, 100, 4, true, []float64{1000, 2000, 3000, 4000}},
		{"failed samples do not count", map[string][]record.Sample{"a": append(at(10), record.Sample{Size: 99, Code: 503}), "b": at(10)}, 100, 1, true, []float64{10}},
		{"nothing", map[string][]record.Sample{"a": nil}, 100, 0, true, nil}, // nothing to pair
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var series []string
			for s := range tc.samples {
				series = append(series, s)
			}
			slices.Sort(series)
			d, _ := analysis.NewDataset(series, tc.samples, "")
			g := d.Grouping(tc.n)
			if g.Groups != tc.groups || g.Shared != tc.shared {
				t.Errorf("Grouping(%d) = %+v, want %d groups, shared %v", tc.n, g, tc.groups, tc.shared)
			}
			var lo []float64
			for _, b := range d.Bins(series[0], metric(t, "latency"), tc.n) {
				lo = append(lo, b.Lo)
			}
			if !slices.Equal(lo, tc.lo) {
				t.Errorf("groups start at %v, want %v", lo, tc.lo)
			}
		})
	}
}
