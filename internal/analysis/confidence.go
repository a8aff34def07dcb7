package analysis

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis/stats"
)

// Bounds of the confidence intervals: fixed, so that a report of the same
// run always shows the same intervals, and bounded work per interval.
const (
	// Resamples is the number of bootstrap resamples per interval.
	Resamples = 2000
	// MaxUnits caps the units one interval resamples; a run with more is
	// thinned evenly (its interval can only get wider).
	MaxUnits = 5000
	// Confidence is the intervals' level.
	Confidence = 0.95
	// bootstrapSeed seeds every interval's generator: reproducible reports.
	bootstrapSeed = 0x636e70657266 // "cnperf"
)

// Interval is a ratio of a mode to the reference with its 95 % confidence
// interval. Lo and Hi are NaN when the run cannot give one (fewer than two
// units, or no finite ratio).
type Interval struct {
	Ratio     float64 // the point estimate
	Lo, Hi    float64
	Instances int // lab instances the units ran on
	Units     int // paired units that entered the interval
}

// Known reports whether the interval has finite bounds.
func (iv Interval) Known() bool {
	return !math.IsNaN(iv.Lo) && !math.IsNaN(iv.Hi) && !math.IsInf(iv.Lo, 0) && !math.IsInf(iv.Hi, 0)
}

// Around moves the interval onto another estimate r of the same ratio: the
// bounds keep their factor to the point (Lo/Ratio, Hi/Ratio). The tables
// show ratios paired by size bin over all samples; the bootstrap resamples
// units, each already a paired ratio, so it estimates the same ratio by a
// slightly different route: its relative uncertainty is what carries over.
func (iv Interval) Around(r float64) Interval {
	out := iv
	out.Ratio = r
	if !iv.Known() || iv.Ratio <= 0 || math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
		out.Lo, out.Hi = math.NaN(), math.NaN()
		return out
	}
	out.Lo, out.Hi = r*iv.Lo/iv.Ratio, r*iv.Hi/iv.Ratio
	return out
}

// PairedUnit is one unit of work (a chunk of sizes, a socket case's
// repetition) as the mode and the reference ran it: the same sizes or
// parameters, on the same instance number, next to each other in time.
type PairedUnit struct {
	Instance  int
	Unit      int     // the unit's index in the plan, for a stable order
	Mode, Ref float64 // the unit's statistic on the mode's cell and the reference's
}

// Estimator combines paired units into one ratio.
type Estimator int

const (
	// GeoMeanOfRatios is the geometric mean of Mode/Ref over the units: for
	// per-unit ratios that are themselves paired medians (ping-pong).
	GeoMeanOfRatios Estimator = iota
	// RatioOfMeans is mean(Mode)/mean(Ref): a socket case's change of the
	// mean over its repetitions, as its tables show.
	RatioOfMeans
)

// Bootstrap returns the ratio of the units and its 95 % interval by a
// two-stage (hierarchical) bootstrap: each resample draws the lab
// instances with replacement, then within each drawn instance its units
// with replacement, and computes the estimator on them. A lab instance can
// be luckier than another for a whole run, so instances, not units, are
// the independent replicates: the spread of the resamples' log ratio is
// widened by sqrt(n/(n-1))·t(n-1)/z for the n replicates (instances, or
// units when the run had one instance), the small-sample correction a
// percentile bootstrap lacks (Hesterberg's expanded percentile interval,
// applied to the spread instead of the levels: 2000 resamples of 3
// instances have no 10⁻⁷ quantile to read). Deterministic: a fixed seed.
func Bootstrap(units []PairedUnit, est Estimator) Interval {
	us := usable(units, est)
	iv := Interval{Ratio: estimate(us, est), Lo: math.NaN(), Hi: math.NaN(), Units: len(us)}
	groups := byInstance(us)
	iv.Instances = len(groups)
	n := len(groups)
	if n < 2 {
		n = len(us)
	}
	if n < 2 || !(iv.Ratio > 0) || math.IsInf(iv.Ratio, 0) {
		return iv
	}
	logs := resample(groups, est)
	if len(logs) < Resamples/2 { // most resamples gave no ratio: nothing to say
		return iv
	}
	slices.Sort(logs)
	centre := math.Log(iv.Ratio)
	lo, hi := quantileSorted(logs, (1-Confidence)/2), quantileSorted(logs, (1+Confidence)/2)
	c := expansion(n)
	iv.Lo = math.Exp(centre - c*math.Max(centre-lo, 0))
	iv.Hi = math.Exp(centre + c*math.Max(hi-centre, 0))
	return iv
}

// usable keeps the units the estimator can use (finite, positive where it
// takes logs), ordered by instance and unit, thinned evenly to MaxUnits.
func usable(units []PairedUnit, est Estimator) []PairedUnit {
	var out []PairedUnit
	for _, u := range units {
		if bad(u.Mode) || bad(u.Ref) || (est == GeoMeanOfRatios && (u.Mode <= 0 || u.Ref <= 0)) {
			continue
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b PairedUnit) int {
		if a.Instance != b.Instance {
			return a.Instance - b.Instance
		}
		return a.Unit - b.Unit
	})
	if len(out) <= MaxUnits {
		return out
	}
	thin := make([]PairedUnit, 0, MaxUnits)
	for i := range MaxUnits {
		thin = append(thin, out[i*len(out)/MaxUnits])
	}
	return thin
}

func bad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// byInstance splits sorted units into their instances.
func byInstance(us []PairedUnit) [][]PairedUnit {
	var out [][]PairedUnit
	for i, u := range us {
		if i == 0 || u.Instance != us[i-1].Instance {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], u)
	}
	return out
}

// acc accumulates an estimator over drawn units.
type acc struct {
	est         Estimator
	sum, sumRef float64
	n           int
}

func (a *acc) add(u PairedUnit) {
	if a.est == GeoMeanOfRatios {
		a.sum += math.Log(u.Mode / u.Ref)
	} else {
		a.sum += u.Mode
		a.sumRef += u.Ref
	}
	a.n++
}

// ratio is the estimate, NaN when it has none.
func (a *acc) ratio() float64 {
	if a.n == 0 {
		return math.NaN()
	}
	if a.est == GeoMeanOfRatios {
		return math.Exp(a.sum / float64(a.n))
	}
	return stats.Ratio(a.sum, a.sumRef)
}

func estimate(us []PairedUnit, est Estimator) float64 {
	a := acc{est: est}
	for _, u := range us {
		a.add(u)
	}
	return a.ratio()
}

// resample draws Resamples two-stage resamples and returns the log of
// each one's positive, finite ratio.
func resample(groups [][]PairedUnit, est Estimator) []float64 {
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(len(groups))))
	logs := make([]float64, 0, Resamples)
	for range Resamples {
		a := acc{est: est}
		for range groups {
			g := groups[rng.IntN(len(groups))]
			for range g {
				a.add(g[rng.IntN(len(g))])
			}
		}
		if r := a.ratio(); r > 0 && !math.IsInf(r, 0) {
			logs = append(logs, math.Log(r))
		}
	}
	return logs
}

// DiffInterval is a difference of means, Mode − Ref, with its 95 %
// confidence interval: how a count (retransmits, losses) compares with the
// reference's, which is often near zero, where a ratio says nothing. Lo
// and Hi are NaN when the run cannot give one.
type DiffInterval struct {
	Diff, Lo, Hi float64
	Instances    int
	Units        int
}

// Known reports whether the interval has finite bounds.
func (d DiffInterval) Known() bool { return !bad(d.Lo) && !bad(d.Hi) }

// Around moves the interval onto another estimate x of the same
// difference: the bounds keep their distance to the point.
func (d DiffInterval) Around(x float64) DiffInterval {
	out := d
	out.Diff = x
	if !d.Known() || bad(x) {
		out.Lo, out.Hi = math.NaN(), math.NaN()
		return out
	}
	out.Lo, out.Hi = x-(d.Diff-d.Lo), x+(d.Hi-d.Diff)
	return out
}

// BootstrapDiff is Bootstrap for the difference of the units' means,
// mean(Mode) − mean(Ref): the same two-stage resampling over instances and
// their units, and the same widening of the resamples' spread.
func BootstrapDiff(units []PairedUnit) DiffInterval {
	us := usable(units, RatioOfMeans)
	diff := func(sum float64, n int) float64 {
		if n == 0 {
			return math.NaN()
		}
		return sum / float64(n)
	}
	var sum float64
	for _, u := range us {
		sum += u.Mode - u.Ref
	}
	d := DiffInterval{Diff: diff(sum, len(us)), Lo: math.NaN(), Hi: math.NaN(), Units: len(us)}
	groups := byInstance(us)
	d.Instances = len(groups)
	n := len(groups)
	if n < 2 {
		n = len(us)
	}
	if n < 2 || bad(d.Diff) {
		return d
	}
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(len(groups))))
	ds := make([]float64, 0, Resamples)
	for range Resamples {
		var s float64
		k := 0
		for range groups {
			g := groups[rng.IntN(len(groups))]
			for range g {
				u := g[rng.IntN(len(g))]
				s += u.Mode - u.Ref
				k++
			}
		}
		ds = append(ds, diff(s, k))
	}
	slices.Sort(ds)
	lo, hi := quantileSorted(ds, (1-Confidence)/2), quantileSorted(ds, (1+Confidence)/2)
	c := expansion(n)
	d.Lo = d.Diff - c*math.Max(d.Diff-lo, 0)
	d.Hi = d.Diff + c*math.Max(hi-d.Diff, 0)
	return d
}

// quantileSorted is the type-7 quantile of sorted values.
func quantileSorted(v []float64, p float64) float64 {
	h := float64(len(v)-1) * p
	i := int(math.Floor(h))
	if i >= len(v)-1 {
		return v[len(v)-1]
	}
	return v[i] + (h-float64(i))*(v[i+1]-v[i])
}

// z975 is the standard normal's 97.5th percentile.
const z975 = 1.959963984540054

// expansion widens a percentile interval from n independent replicates:
// sqrt(n/(n-1)) undoes the bootstrap's (n-1)/n variance, t(n-1)/z the
// normal quantile a t with n-1 degrees of freedom should have been.
func expansion(n int) float64 {
	f := float64(n)
	return math.Sqrt(f/(f-1)) * t975(n-1) / z975
}

// t975s are Student's t 97.5th percentiles for 1..30 degrees of freedom.
var t975s = []float64{12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
	2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
	2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423}

// t975 is Student's t 97.5th percentile for df degrees of freedom: the
// table up to 30, then the Cornish-Fisher expansion (off by under 1e-4).
func t975(df int) float64 {
	if df < 1 {
		return math.Inf(1)
	}
	if df <= len(t975s) {
		return t975s[df-1]
	}
	z, v := z975, float64(df)
	z3, z5 := z*z*z, z*z*z*z*z
	return z + (z3+z)/(4*v) + (5*z5+16*z3+3*z)/(96*v*v)
}
