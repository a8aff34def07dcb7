package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

// units builds paired units: ratios[i][k] is unit k's ratio on instance i.
func units(ratios [][]float64) []PairedUnit {
	var out []PairedUnit
	for i, rs := range ratios {
		for k, r := range rs {
			out = append(out, PairedUnit{Instance: i, Unit: k*len(ratios) + i, Mode: 50 * r, Ref: 50})
		}
	}
	return out
}

func TestIntervalOf(t *testing.T) {
	for _, c := range []struct {
		name       string
		units      []PairedUnit
		est        Estimator
		ratio      float64
		known      bool
		inst, n    int
		exact      bool // Lo == Hi == Ratio
		minW, maxW float64
	}{
		{"one unit cannot tell", units([][]float64{{0.8}}), GeoMeanOfRatios, 0.8, false, 1, 1, false, 0, 0},
		{"no units", nil, GeoMeanOfRatios, math.NaN(), false, 0, 0, false, 0, 0},
		{"identical units: a point", units([][]float64{{0.8, 0.8, 0.8}}), GeoMeanOfRatios, 0.8, true, 1, 3, true, 0, 0},
		{"geometric mean", units([][]float64{{0.5, 2, 1, 1}}), GeoMeanOfRatios, 1, true, 1, 4, false, 0.1, 10},
		{"ratio of means", []PairedUnit{{0, 0, 6, 10}, {0, 1, 10, 10}}, RatioOfMeans, 0.8, true, 1, 2, false, 0.01, 10},
		{"bad values are left out", []PairedUnit{{0, 0, 8, 10}, {0, 1, math.NaN(), 10}, {0, 2, -1, 10}, {0, 3, 8, 10}}, GeoMeanOfRatios, 0.8, true, 1, 2, true, 0, 0},
		{"a zero reference mean", []PairedUnit{{0, 0, 6, 0}, {0, 1, 10, 0}}, RatioOfMeans, math.NaN(), false, 1, 2, false, 0, 0},
		// Instances apart widen the interval far beyond the cells' spread.
		{"instances", units([][]float64{{0.8, 0.81, 0.79}, {0.7, 0.71, 0.69}, {0.9, 0.91, 0.89}}), GeoMeanOfRatios, 0.796, true, 3, 9, false, 0.2, 2},
		{"steady instances", units([][]float64{{0.8, 0.81, 0.79}, {0.8, 0.81, 0.79}, {0.8, 0.81, 0.79}}), GeoMeanOfRatios, 0.8, true, 3, 9, false, 0.001, 0.1},
	} {
		t.Run(c.name, func(t *testing.T) {
			iv := IntervalOf(c.units, c.est)
			if math.Abs(iv.Ratio-c.ratio) > 1e-3 && !(math.IsNaN(c.ratio) && math.IsNaN(iv.Ratio)) {
				t.Errorf("ratio %v, want %v", iv.Ratio, c.ratio)
			}
			if iv.Known() != c.known || iv.Instances != c.inst || iv.Units != c.n {
				t.Fatalf("got %+v, want known %v, %d instances, %d units", iv, c.known, c.inst, c.n)
			}
			if !c.known {
				return
			}
			if iv.Lo > iv.Ratio || iv.Hi < iv.Ratio {
				t.Errorf("%+v: the point is outside its interval", iv)
			}
			w := math.Log(iv.Hi / iv.Lo)
			if c.exact && w != 0 {
				t.Errorf("%+v: identical ratios give a point", iv)
			}
			if !c.exact && (w < c.minW || w > c.maxW) {
				t.Errorf("%+v: log width %.4f, want in [%g, %g]", iv, w, c.minW, c.maxW)
			}
			if again := IntervalOf(c.units, c.est); again != iv {
				t.Errorf("not reproducible: %+v then %+v", iv, again)
			}
		})
	}
}

func TestAround(t *testing.T) {
	iv := Interval{Ratio: 0.8, Lo: 0.72, Hi: 0.88, Units: 4}
	got := iv.Around(0.5)
	if !near(got.Ratio, 0.5) || !near(got.Lo, 0.45) || !near(got.Hi, 0.55) || got.Units != 4 {
		t.Errorf("Around(0.5) = %+v", got)
	}
	for _, r := range []float64{math.NaN(), 0, -1, math.Inf(1)} {
		if g := iv.Around(r); g.Known() {
			t.Errorf("Around(%v) = %+v: no interval around no ratio", r, g)
		}
	}
	if g := (Interval{Ratio: 0.8, Lo: math.NaN(), Hi: math.NaN()}).Around(0.5); g.Known() || g.Ratio != 0.5 {
		t.Errorf("an unknown interval stays unknown: %+v", g)
	}
}

func TestT975(t *testing.T) {
	for _, c := range []struct {
		df, want, tol float64
	}{{1, 12.7062, 2e-4}, {2, 4.3027, 2e-4}, {30, 2.0423, 2e-4}, {31, 2.0395, 2e-4}, {60, 2.0003, 2e-4}, {120, 1.9799, 2e-4}, {100000, 1.96, 2e-4},
		{0.5, math.Inf(1), 0}, {math.Inf(1), 1.96, 1e-3}} {
		if got := t975(c.df); !(math.Abs(got-c.want) <= c.tol) && got != c.want {
			t.Errorf("t975(%v) = %.5f, want %.4f", c.df, got, c.want)
		}
	}
	// Between the table's entries it falls, as the quantile does.
	for df := 1.0; df < 40; df += 0.25 {
		if a, b := t975(df), t975(df+0.25); !(b < a) {
			t.Errorf("t975(%v) = %v, t975(%v) = %v: not falling", df, a, df+0.25, b)
		}
	}
}

func TestF95(t *testing.T) {
	// Tabled 95th percentiles of F; Paulson's approximation is close enough
	// to decide when a mode's instances disagree with the pool.
	for _, c := range []struct {
		d1, d2 int
		want   float64
	}{{2, 100, 3.087}, {2, 30, 3.316}, {4, 200, 2.418}, {1, 1 << 20, 3.841}, {2, 0, 2.996}} {
		if got := fQuantile(c.d1, c.d2, 1.6448536269514722); math.Abs(got/c.want-1) > 0.05 {
			t.Errorf("fQuantile(%d, %d, z95) = %.3f, want %.3f", c.d1, c.d2, got, c.want)
		}
	}
}

func TestCost(t *testing.T) {
	iv := Interval{Ratio: 0.79, Lo: 0.77, Hi: 0.81}
	for _, c := range []struct {
		higher       bool
		cost, lo, hi float64
	}{{true, 21, 19, 23}, {false, -21, -23, -19}} {
		r := RatioCI{Metric: workload.Metric{HigherIsBetter: c.higher}, Interval: iv}
		cost, lo, hi := r.Cost()
		if !near(cost, c.cost) || !near(lo, c.lo) || !near(hi, c.hi) {
			t.Errorf("higher %v: cost %v [%v, %v], want %v [%v, %v]", c.higher, cost, lo, hi, c.cost, c.lo, c.hi)
		}
	}
}

// pingPongRun is a run of two modes over chunks spread on instances: the
// mode "b" runs at factor[chunk % instances] of the reference's speed.
func pingPongRun(chunks, instances int, factor []float64) ([]record.Sample, map[int]Cell) {
	cells := map[int]Cell{}
	var samples []record.Sample
	cell := 0
	for chunk := range chunks {
		for _, m := range []string{"a", "b"} {
			f := 1.0
			if m == "b" {
				f = factor[chunk%instances]
			}
			cells[cell] = Cell{Mode: m, Chunk: chunk, Instance: chunk % instances, Rate: 100 * f}
			for _, size := range []int{1000 * (chunk + 1), 500 * (chunk + 3)} {
				ms := float64(size) / 1e4 / f // 10 MB/s at f = 1
				for rep := range 3 {
					samples = append(samples, record.Sample{Mode: m, Cell: cell, Size: size, Rep: rep, Length: size, Code: 200, DurationMS: ms, LatencyMS: ms + 1})
				}
			}
			cell++
		}
	}
	return samples, cells
}

func TestSweepIntervals(t *testing.T) {
	samples, cells := pingPongRun(8, 2, []float64{0.8, 0.6})
	set := NewSweep(samples, cells, []string{"a", "b"})
	paired := set.Paired("b", "a", "transfer")
	if len(paired) != 8 {
		t.Fatalf("%d paired units, want 8", len(paired))
	}
	for _, p := range paired {
		want := []float64{0.8, 0.6}[p.Unit%2]
		if !near(p.Mode, want) || p.Instance != p.Unit%2 {
			t.Errorf("unit %+v: want ratio %v on instance %d", p, want, p.Unit%2)
		}
	}
	cis := Intervals([]Case{set.Case(pingpong.Descriptor)}, "a")
	if len(cis) != 4 {
		t.Fatalf("%d intervals, want one per metric", len(cis))
	}
	for _, ci := range cis {
		if ci.Mode != "b" || !ci.Known() || ci.Instances != 2 || ci.Units != 8 || ci.Lo > 0.6+1e-9 && ci.Metric.HigherIsBetter {
			t.Errorf("%s: %+v: two instances at 0.8 and 0.6 must give a wide interval", ci.Metric.Key, ci)
		}
		if ci.Lo > ci.Ratio || ci.Hi < ci.Ratio {
			t.Errorf("%s: %+v: point outside", ci.Metric.Key, ci)
		}
	}
	if Intervals([]Case{set.Case(pingpong.Descriptor)}, "c") != nil {
		t.Error("no reference, no intervals")
	}
}

func TestIntervalsPairRepetitions(t *testing.T) {
	var obs []Observation
	cell := 0
	for rep := range 4 {
		for _, m := range []struct {
			s string
			v float64
		}{{"bare", 1000}, {"overlay", 600 + 100*float64(rep%2)}} {
			obs = append(obs, Observation{Series: m.s, Case: "stream", Work: "stream", Cell: cell, Unit: rep, Values: map[string]float64{"throughput": m.v}})
			cell++
		}
	}
	cases := Cases(obs, []string{"bare", "overlay"}, "bare", 2)
	cis := Intervals(cases, "bare")
	var got *RatioCI
	for i, c := range cis {
		if c.Metric.Key == "throughput" {
			got = &cis[i]
		}
	}
	if got == nil || got.Mode != "overlay" || !got.Headline || got.Units != 4 || !near(got.Ratio, 0.65) || !got.Known() {
		t.Fatalf("throughput interval: %+v", got)
	}
	if got.Lo > 0.6 || got.Hi < 0.7 || got.Lo < 0.4 || got.Hi > 0.9 {
		t.Errorf("interval %+v: want about [0.6, 0.7] widened for 4 repetitions", got.Interval)
	}
}

// simModes simulates one run of several modes with a shared reference:
// each mode's log ratio on a unit is its truth, plus its instance's luck
// (the mode's lab less the reference's lab on that instance, so modes'
// luck is correlated as it is in a real run), plus the cell's noise.
func simModes(rng *rand.Rand, instances, perInstance int, truth, sdInst []float64, sdCell float64, est Estimator) [][]PairedUnit {
	ref := make([]float64, instances)
	for i := range ref {
		ref[i] = rng.NormFloat64() / math.Sqrt2
	}
	out := make([][]PairedUnit, len(truth))
	for k := range truth {
		for i := range instances {
			a := sdInst[k] * (rng.NormFloat64()/math.Sqrt2 - ref[i])
			for j := range perInstance {
				u := PairedUnit{Instance: i, Unit: i + j*instances}
				if est == GeoMeanOfRatios {
					u.Mode, u.Ref = truth[k]*math.Exp(a+rng.NormFloat64()*sdCell), 1
				} else { // noise on both sides of a repetition, as on real ones
					u.Mode = 100 * truth[k] * math.Exp(a+rng.NormFloat64()*sdCell/math.Sqrt2)
					u.Ref = 100 * math.Exp(rng.NormFloat64()*sdCell/math.Sqrt2)
				}
				out[k] = append(out[k], u)
			}
		}
	}
	return out
}

// coverageCase is a kind of run the intervals must cover the truth for.
type coverageCase struct {
	name               string
	instances, perInst int
	sdInst             []float64 // per mode
	sdCell             float64
	est                Estimator
	min                float64 // lowest coverage accepted
}

var coverageCases = []coverageCase{
	// The quick preset on a busy machine, as measured: cells dominate.
	{"quick, busy: cells 0.30, instances 0", 3, 33, []float64{0, 0, 0, 0}, 0.30, GeoMeanOfRatios, 0.93},
	{"quick, quiet: cells 0.08, instances 0.02", 3, 33, []float64{0.02, 0.02, 0.02, 0.02}, 0.08, GeoMeanOfRatios, 0.93},
	{"instances dominate: 0.10 against cells 0.02", 3, 10, []float64{0.1, 0.1, 0.1, 0.1}, 0.02, GeoMeanOfRatios, 0.93},
	{"2 instances, as noisy as cells", 2, 10, []float64{0.05, 0.05, 0.05, 0.05}, 0.05, GeoMeanOfRatios, 0.93},
	{"5 instances, 2 modes", 5, 6, []float64{0.05, 0.05}, 0.05, GeoMeanOfRatios, 0.93},
	{"one instance, cells only", 1, 12, []float64{0, 0, 0, 0}, 0.05, GeoMeanOfRatios, 0.93},
	{"socket case: 3 instances, 3 repetitions each", 3, 3, []float64{0.05, 0.05, 0.05, 0.05}, 0.05, RatioOfMeans, 0.92},
	// One mode's labs vary, the others' do not: the pool underrates that
	// mode's instances unless its own mean square gives it away.
	{"one mode's instances vary, 0.05, the others' not", 3, 33, []float64{0.05, 0, 0, 0}, 0.08, GeoMeanOfRatios, 0.85},
}

// The 95 % intervals of a run's ratios must cover the true ratio in about
// 95 % of simulated runs, and the interval of the change between two
// independent runs the true change, for the noise real runs show.
func TestIntervalCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 16,000 runs")
	}
	const runs = 1000
	rng := rand.New(rand.NewPCG(14, 4))
	for _, c := range coverageCases {
		truth := make([]float64, len(c.sdInst))
		for k := range truth {
			truth[k] = 0.6 + 0.1*float64(k)
		}
		var hit, hitChange, n, nChange int
		var width float64
		for range runs {
			a := simModes(rng, c.instances, c.perInst, truth, c.sdInst, c.sdCell, c.est)
			b := simModes(rng, c.instances, c.perInst, truth, c.sdInst, c.sdCell, c.est)
			var sa, sb []Spread
			for k := range a {
				sa, sb = append(sa, Measure(a[k], c.est)), append(sb, Measure(b[k], c.est))
			}
			pa, both := Pool(sa...), Pool(append(sa, sb...)...)
			// Only the first mode counts: in the last case it is the odd one.
			iv := sa[0].Interval(pa)
			n++
			if iv.Lo <= truth[0] && truth[0] <= iv.Hi {
				hit++
			}
			ch := CompareRuns(sb[0], sa[0], both)
			nChange++
			if math.Abs(ch.Log) <= ch.Half {
				hitChange++
			}
			width += ch.Half
		}
		cov, covChange := float64(hit)/float64(n), float64(hitChange)/float64(nChange)
		t.Logf("%-50s run %.3f, change %.3f (mean half-width %.1f %%)", c.name, cov, covChange, 100*width/float64(nChange))
		for _, x := range []struct {
			what string
			cov  float64
		}{{"run", cov}, {"change", covChange}} {
			if x.cov < c.min || x.cov > 0.98 {
				t.Errorf("%s: the %s interval covered the truth in %.1f %% of %d runs, want %.0f-98 %%", c.name, x.what, 100*x.cov, runs, 100*c.min)
			}
		}
	}
}

// A run-level shift (the machine's state moving every ratio of a run)
// is invisible to one run's units: one baseline misses it, several
// baselines' spread measures it.
func TestCompareToRunsCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 12,000 runs")
	}
	const trials, k = 1000, 3
	rng := rand.New(rand.NewPCG(28, 11))
	truth := []float64{0.6, 0.7, 0.8, 0.9}
	sdInst := []float64{0.03, 0.03, 0.03, 0.03}
	run := func(sdRun float64) ([]Spread, []float64, Between) {
		us := simModes(rng, 3, 33, truth, sdInst, 0.1, GeoMeanOfRatios)
		shift := rng.NormFloat64() * sdRun
		var ss []Spread
		for m := range us {
			for i := range us[m] {
				us[m][i].Mode *= math.Exp(shift)
			}
			ss = append(ss, Measure(us[m], GeoMeanOfRatios))
		}
		logs := []float64{math.Log(ss[0].Ratio)}
		return ss, logs, Pool(ss...)
	}
	for _, c := range []struct {
		sdRun           float64
		minOne, minMany float64
		maxOne, maxMany float64
	}{{0, 0.93, 0.93, 0.98, 0.99}, {0.05, 0, 0.92, 0.80, 0.99}} {
		var one, many int
		for range trials {
			now, nowLog, _ := run(c.sdRun)
			var olds []Spread
			var oldLogs, vars []float64
			all := append([]Spread(nil), now...)
			for range k {
				o, l, _ := run(c.sdRun)
				olds = append(olds, o[0])
				oldLogs = append(oldLogs, l[0])
				all = append(all, o...)
			}
			pool := Pool(all...)
			for _, o := range olds {
				v, _, _ := o.Variance(pool)
				vars = append(vars, v)
			}
			single := CompareRuns(now[0], olds[0], pool)
			if math.Abs(single.Log) <= single.Half {
				one++
			}
			ch := CompareToRuns(nowLog[0], now[0], oldLogs, olds, pool, EstimateBetweenRuns(oldLogs, vars))
			if ch.Known && math.Abs(ch.Log) <= ch.Half {
				many++
			}
		}
		covOne, covMany := float64(one)/trials, float64(many)/trials
		t.Logf("run-level shift %.2f: one baseline covers %.3f, %d baselines %.3f", c.sdRun, covOne, k, covMany)
		if covOne < c.minOne || covOne > c.maxOne || covMany < c.minMany || covMany > c.maxMany {
			t.Errorf("shift %.2f: coverage %.3f with one baseline (want %.2f-%.2f), %.3f with %d (want %.2f-%.2f)",
				c.sdRun, covOne, c.minOne, c.maxOne, covMany, k, c.minMany, c.maxMany)
		}
	}
}

// TestDiffOf: a count near zero on the reference gets its
// difference with an interval around it, where a ratio would be thousands
// of percent; too few units give none.
func TestDiffOf(t *testing.T) {
	var units []PairedUnit
	for inst := range 3 {
		for u := range 10 {
			units = append(units, PairedUnit{Instance: inst, Unit: u, Mode: 9000 + float64(100*inst+u), Ref: float64(12 + u%3)})
		}
	}
	d := DiffOf(units)
	if !d.Known() || d.Lo > d.Diff || d.Hi < d.Diff || d.Instances != 3 || d.Units != 30 {
		t.Fatalf("DiffOf = %+v", d)
	}
	if d.Diff < 8980 || d.Diff > 9200 || d.Lo < 8000 || d.Hi > 10500 {
		t.Errorf("difference %+v, want about 9096 with bounds within a few hundred", d)
	}
	a := d.Around(100)
	if a.Diff != 100 || math.Abs((a.Hi-a.Lo)-(d.Hi-d.Lo)) > 1e-9 {
		t.Errorf("Around(100) = %+v: the bounds keep their distance", a)
	}
	if one := DiffOf(units[:1]); one.Known() || one.Units != 1 {
		t.Errorf("one unit: %+v, want no interval", one)
	}
}

func TestCountChange(t *testing.T) {
	for _, tc := range []struct {
		name      string
		v, ref    float64
		wantDiff  float64
		wantClass string
	}{
		{"up from near zero", 9388, 13, 9375, "worse"},
		{"up from zero", 5, 0, 5, "worse"},
		{"down to zero", 0, 725, -725, "better"},
		{"zero on both", 0, 0, 0, "same"},
	} {
		c := countChange(tc.v, tc.ref, false, true, false, 5)
		if !c.Count || c.Diff != tc.wantDiff || c.Class != tc.wantClass {
			t.Errorf("%s: %+v, want diff %v, class %s", tc.name, c, tc.wantDiff, tc.wantClass)
		}
	}
	if c := countChange(13, 13, true, true, false, 5); c.Class != "ref" || !math.IsNaN(c.Diff) {
		t.Errorf("the reference: %+v", c)
	}
}
