package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

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

func TestBootstrap(t *testing.T) {
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
			iv := Bootstrap(c.units, c.est)
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
			if again := Bootstrap(c.units, c.est); again != iv {
				t.Errorf("not reproducible: %+v then %+v", iv, again)
			}
		})
	}
}

func TestBootstrapThinsToMaxUnits(t *testing.T) {
	rs := make([]float64, MaxUnits*2+1)
	for i := range rs {
		rs[i] = 0.8 + 0.01*float64(i%3)
	}
	iv := Bootstrap(units([][]float64{rs}), GeoMeanOfRatios)
	if iv.Units != MaxUnits || !iv.Known() {
		t.Errorf("%+v: want %d units and an interval", iv, MaxUnits)
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
		df   int
		want float64
	}{{1, 12.7062}, {2, 4.3027}, {30, 2.0423}, {31, 2.0395}, {60, 2.0003}, {120, 1.9799}, {100000, 1.96}} {
		if got := t975(c.df); math.Abs(got-c.want) > 2e-4 {
			t.Errorf("t975(%d) = %.5f, want %.4f", c.df, got, c.want)
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
func pingPongRun(chunks, instances int, factor []float64) ([]pingpong.Sample, map[int]CellUnit, []CellRate) {
	cells := map[int]CellUnit{}
	var samples []pingpong.Sample
	var rates []CellRate
	cell := 0
	for chunk := range chunks {
		for _, m := range []string{"a", "b"} {
			cells[cell] = CellUnit{Chunk: chunk, Instance: chunk % instances}
			f := 1.0
			if m == "b" {
				f = factor[chunk%instances]
			}
			for _, size := range []int{1000 * (chunk + 1), 500 * (chunk + 3)} {
				ms := float64(size) / 1e4 / f // 10 MB/s at f = 1
				for rep := range 3 {
					samples = append(samples, pingpong.Sample{Mode: m, Cell: cell, Size: size, Rep: rep, Length: size, Code: 200, DurationMS: ms, LatencyMS: ms + 1})
				}
			}
			rates = append(rates, CellRate{Mode: m, Chunk: chunk, Rate: 100 * f})
			cell++
		}
	}
	return samples, cells, rates
}

func TestPingPongIntervals(t *testing.T) {
	samples, cells, rates := pingPongRun(8, 2, []float64{0.8, 0.6})
	set := NewPingPongSet(samples, rates, []string{"a", "b"})
	u := NewPingPongUnits(samples, cells, rates)
	paired := u.Paired("b", "a", "transfer")
	if len(paired) != 8 {
		t.Fatalf("%d paired units, want 8", len(paired))
	}
	for _, p := range paired {
		want := []float64{0.8, 0.6}[p.Unit%2]
		if !near(p.Mode, want) || p.Instance != p.Unit%2 {
			t.Errorf("unit %+v: want ratio %v on instance %d", p, want, p.Unit%2)
		}
	}
	cis := PingPongIntervals(set, u, []string{"a", "b"}, "a")
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
	if PingPongIntervals(set, u, []string{"a", "b"}, "c") != nil {
		t.Error("no reference, no intervals")
	}
}

func TestSocketIntervalsPairUnits(t *testing.T) {
	var obs []SocketObs
	cells := map[int]CellUnit{}
	cell := 0
	for rep := range 4 {
		for _, m := range []struct {
			s string
			v float64
		}{{"bare", 1000}, {"overlay", 600 + 100*float64(rep%2)}} {
			cells[cell] = CellUnit{Chunk: rep, Instance: 0}
			obs = append(obs, SocketObs{Series: m.s, Case: "stream", Work: "stream", Rep: rep, Cell: cell, Values: map[string]float64{"throughput": m.v}})
			cell++
		}
	}
	cases := SocketCases(obs, []string{"bare", "overlay"}, "bare", 2)
	cis := SocketIntervals(cases, obs, cells, "bare")
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

// simRun is one simulated run with true ratio truth: every lab instance
// (the mode's and the reference's alike) is off by a log-normal factor
// (sdInst) for the whole run, and every cell by sdCell.
func simRun(rng *rand.Rand, instances, perInstance int, truth, sdInst, sdCell float64) []PairedUnit {
	var out []PairedUnit
	for i := range instances {
		a, b := math.Exp(rng.NormFloat64()*sdInst), math.Exp(rng.NormFloat64()*sdInst)
		for k := range perInstance {
			out = append(out, PairedUnit{Instance: i, Unit: i + k*instances,
				Mode: 100 * truth * a * math.Exp(rng.NormFloat64()*sdCell),
				Ref:  100 * b * math.Exp(rng.NormFloat64()*sdCell)})
		}
	}
	return out
}

// The 95 % intervals must cover the true ratio in about 95 % of runs when
// lab instances differ, the noise the interval was built for.
func TestBootstrapCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 1600 runs")
	}
	const runs, truth = 400, 0.8
	rng := rand.New(rand.NewPCG(14, 4))
	for _, c := range []struct {
		name               string
		instances, perInst int
		sdInst, sdCell     float64
		est                Estimator
	}{
		{"3 instances, instances as noisy as cells", 3, 10, 0.05, 0.05, GeoMeanOfRatios},
		{"3 instances, instance luck dominates", 3, 10, 0.10, 0.02, RatioOfMeans},
		{"5 instances", 5, 6, 0.05, 0.05, GeoMeanOfRatios},
		{"one instance, cells only", 1, 12, 0, 0.05, RatioOfMeans},
	} {
		hit := 0
		for range runs {
			iv := Bootstrap(simRun(rng, c.instances, c.perInst, truth, c.sdInst, c.sdCell), c.est)
			if iv.Lo <= truth && truth <= iv.Hi {
				hit++
			}
		}
		cov := float64(hit) / runs
		t.Logf("%s: coverage %.3f", c.name, cov)
		if cov < 0.90 || cov > 0.99 {
			t.Errorf("%s: the 95 %% interval covered the true ratio in %.1f %% of %d runs, want 90-99 %%", c.name, 100*cov, runs)
		}
	}
}

// TestBootstrapDiff: a count near zero on the reference gets its
// difference with an interval around it, where a ratio would be thousands
// of percent; too few units give none.
func TestBootstrapDiff(t *testing.T) {
	var units []PairedUnit
	for inst := range 3 {
		for u := range 10 {
			units = append(units, PairedUnit{Instance: inst, Unit: u, Mode: 9000 + float64(100*inst+u), Ref: float64(12 + u%3)})
		}
	}
	d := BootstrapDiff(units)
	if !d.Known() || d.Lo > d.Diff || d.Hi < d.Diff || d.Instances != 3 || d.Units != 30 {
		t.Fatalf("BootstrapDiff = %+v", d)
	}
	if d.Diff < 8980 || d.Diff > 9200 || d.Lo < 8000 || d.Hi > 10500 {
		t.Errorf("difference %+v, want about 9096 with bounds within a few hundred", d)
	}
	a := d.Around(100)
	if a.Diff != 100 || math.Abs((a.Hi-a.Lo)-(d.Hi-d.Lo)) > 1e-9 {
		t.Errorf("Around(100) = %+v: the bounds keep their distance", a)
	}
	if one := BootstrapDiff(units[:1]); one.Known() || one.Units != 1 {
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
