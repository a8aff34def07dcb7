package analysis

import (
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis/stats"
)

// Confidence is the intervals' level.
const Confidence = 0.95

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
// show ratios paired by size bin over all samples; the interval comes from
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

// PairedUnit is one unit of work (a chunk of sizes, a case's
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
	// RatioOfMeans is mean(Mode)/mean(Ref): a case's change of the
	// mean over its repetitions, as its tables show.
	RatioOfMeans
)

// Spread is what one mode's paired units say about its log ratio to the
// reference: the estimate, and the two variance components of the model
// log ratio of unit = μ + (its lab instance's luck) + (its cell's noise).
// A lab instance can be luckier than another for a whole run; cells vary
// over time. The variance of the estimate is
//
//	σ²_instance · Σ m_i² / N²  +  σ²_cell / N
//
// for N units, m_i of them on instance i. The cells' variance is the mean
// square within instances (many degrees of freedom); the instances'
// variance has only n-1 per mode and run, so Pool estimates it from every
// mode (and every run of a comparison) together.
type Spread struct {
	Ratio     float64 // the estimator's ratio; NaN when it has none
	Units     int     // N: units with a usable value
	Instances int     // n: instances they ran on
	S2        float64 // Σ m_i²
	MSW       float64 // within-instance mean square of the units' log ratios
	DFW       int     // its degrees of freedom, N - n
	MSB       float64 // between-instance mean square, Σ m_i (ȳ_i − ȳ)² / (n-1)
	DFB       int     // n - 1
}

// Measure computes the spread of units under an estimator. Each unit's
// value is its log ratio (GeoMeanOfRatios) or its linearised contribution
// to the log of the ratio of means (RatioOfMeans: log r + Mode/mean(Mode)
// − Ref/mean(Ref), the delta method), so that the estimate's log is the
// mean of the values either way.
func Measure(units []PairedUnit, est Estimator) Spread {
	us := usable(units, est)
	groups := byInstance(us)
	s := Spread{Ratio: estimate(us, est), Units: len(us), Instances: len(groups)}
	if len(us) == 0 || !(s.Ratio > 0) || math.IsInf(s.Ratio, 0) {
		s.Ratio = math.NaN()
		return s
	}
	s.components(values(us, est, s.Ratio), groups, math.Log(s.Ratio))
	return s
}

// components sets the spread's mean squares from the units' values ys
// (in the order of groups, their instances) around their mean.
func (s *Spread) components(ys []float64, groups [][]PairedUnit, mean float64) {
	at := 0
	for _, g := range groups {
		gm := stats.Mean(ys[at : at+len(g)])
		for _, y := range ys[at : at+len(g)] {
			s.MSW += (y - gm) * (y - gm)
		}
		s.MSB += float64(len(g)) * (gm - mean) * (gm - mean)
		s.S2 += float64(len(g) * len(g))
		at += len(g)
	}
	s.DFW, s.DFB = len(ys)-len(groups), len(groups)-1
	if s.DFW > 0 {
		s.MSW /= float64(s.DFW)
	}
	if s.DFB > 0 {
		s.MSB /= float64(s.DFB)
	}
}

// values are the units' log ratios or their linearised contributions.
func values(us []PairedUnit, est Estimator, ratio float64) []float64 {
	ys := make([]float64, len(us))
	if est == GeoMeanOfRatios {
		for i, u := range us {
			ys[i] = math.Log(u.Mode / u.Ref)
		}
		return ys
	}
	var sm, sr float64
	for _, u := range us {
		sm += u.Mode
		sr += u.Ref
	}
	mm, mr := sm/float64(len(us)), sr/float64(len(us))
	for i, u := range us {
		ys[i] = math.Log(ratio) + u.Mode/mm - u.Ref/mr
	}
	return ys
}

// m0 is the units per instance an unbalanced design counts as:
// (N − Σm_i²/N)/(n−1), the factor of σ²_instance in the between mean square.
func (s Spread) m0() float64 {
	return (float64(s.Units) - s.S2/float64(s.Units)) / float64(s.DFB)
}

// between is the mode's own estimate of the instances' variance and that
// estimate's sampling variance; ok false with fewer than two instances.
func (s Spread) between() (v, vv float64, ok bool) {
	if s.Instances < 2 {
		return 0, 0, false
	}
	m0 := s.m0()
	v = (s.MSB - s.MSW) / m0
	vv = 2 * s.MSB * s.MSB / float64(s.DFB)
	if s.DFW > 0 {
		vv += 2 * s.MSW * s.MSW / float64(s.DFW)
	}
	return v, vv / (m0 * m0), true
}

// Between is the instances' variance of the log ratio, estimated from the
// spreads of several modes (and runs): with 3 instances one mode alone
// gives it 2 degrees of freedom, so a t quantile of 4.3; pooled over 4 modes
// and 2 runs, 16 and 2.1.
type Between struct {
	Var    float64 // σ²_instance, at least 0
	VarVar float64 // the sampling variance of its estimate (before the floor at 0)
	DF     int     // the instance degrees of freedom that went into it
}

// Pool estimates the instances' variance from every spread with at least
// two instances, each weighted by its degrees of freedom. It assumes that
// lab instances vary alike in every mode; a mode whose own instances
// disagree (Spread.Interval's check) is judged on its own.
func Pool(spreads ...Spread) Between {
	var sum, df float64
	type part struct{ w, vv float64 }
	var parts []part
	for _, s := range spreads {
		v, vv, ok := s.between()
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		sum += float64(s.DFB) * v
		df += float64(s.DFB)
		parts = append(parts, part{float64(s.DFB), vv})
	}
	if df == 0 {
		return Between{}
	}
	b := Between{Var: math.Max(sum/df, 0), DF: int(df)}
	for _, p := range parts {
		b.VarVar += p.w * p.w / (df * df) * p.vv
	}
	return b
}

// Variance is the sampling variance of the spread's log ratio with its
// Satterthwaite degrees of freedom, the instances' variance taken from
// the pool unless the mode's own instances are further apart than the
// pool allows (their mean square above its 95th percentile, then the
// mode's own estimate is used). ok is false with fewer than two units.
func (s Spread) Variance(pool Between) (v, df float64, ok bool) {
	if s.Units < 2 || math.IsNaN(s.Ratio) {
		return math.NaN(), 0, false
	}
	n := float64(s.Units)
	within := s.MSW / n
	if s.DFW == 0 { // one unit per instance: the instances are the units
		within = 0
	}
	own, ownVV, several := s.between()
	if !several {
		// One instance: its luck is invisible, the cells are all there is.
		return within, float64(s.DFW), true
	}
	inst, instVV := pool.Var, pool.VarVar
	if pool.DF == 0 || s.outlier(pool) {
		inst, instVV = math.Max(own, 0), ownVV
	}
	c := s.S2 / (n * n)
	v = c*inst + within
	if v <= 0 {
		return 0, math.Inf(1), true
	}
	// Satterthwaite: each part's squared size over its degrees of freedom.
	den := 0.0
	if inst > 0 {
		den += c * c * instVV / 2
	}
	if s.DFW > 0 {
		den += within * within / float64(s.DFW)
	}
	if den == 0 {
		return v, math.Inf(1), true
	}
	return v, math.Max(v*v/den, 1), true
}

// guardZ is the normal quantile of the F percentile past which a mode's
// instances disagree with the pool: the 90th. Simulated with one mode's
// labs varying (σ 0.05) and three others' steady, its interval covered
// 87 % of the time with this guard, 82 % at the 95th percentile, 91 % at
// the 80th; modes that vary alike pay with a wider interval when the
// guard fires by chance (10 % of runs).
const guardZ = 1.2815515655446004

// outlier reports whether the mode's instances lie further apart than the
// pooled variance allows: the between mean square over its expectation
// under the pool is past the F distribution's 90th percentile.
func (s Spread) outlier(pool Between) bool {
	want := s.m0()*pool.Var + s.MSW
	if s.DFW == 0 {
		want = pool.Var
	}
	if want <= 0 {
		return s.MSB > 0
	}
	return s.MSB/want > fQuantile(s.DFB, s.DFW, guardZ)
}

// Interval is the spread's 95 % interval: the log ratio ± t · √variance.
func (s Spread) Interval(pool Between) Interval {
	iv := Interval{Ratio: s.Ratio, Lo: math.NaN(), Hi: math.NaN(), Units: s.Units, Instances: s.Instances}
	v, df, ok := s.Variance(pool)
	if !ok {
		return iv
	}
	h := t975(df) * math.Sqrt(v)
	iv.Lo, iv.Hi = s.Ratio*math.Exp(-h), s.Ratio*math.Exp(h)
	return iv
}

// IntervalOf is the interval of one mode's units on their own, the
// instances' variance from this mode alone.
func IntervalOf(units []PairedUnit, est Estimator) Interval {
	s := Measure(units, est)
	return s.Interval(Pool(s))
}

// ChangeCI is the change of a ratio between two runs, as a log: the new
// log ratio less the old, with the half-width of its 95 % interval.
type ChangeCI struct {
	Log, Half float64
	DF        float64
	Known     bool
}

// CompareRuns compares the same ratio in two runs. The runs are independent
// (their labs were built apart, their cells ran at other times), so the
// variances add and Welch-Satterthwaite gives the degrees of freedom; the
// instances' variance comes from the pool of both runs.
func CompareRuns(now, old Spread, pool Between) ChangeCI {
	vn, dn, okN := now.Variance(pool)
	vo, do, okO := old.Variance(pool)
	c := ChangeCI{Log: math.Log(now.Ratio) - math.Log(old.Ratio)}
	if !okN || !okO || bad(c.Log) {
		return c
	}
	return c.with(varPart{vn, dn}, varPart{vo, do})
}

// varPart is an independent part of a variance with its degrees of freedom.
type varPart struct{ v, df float64 }

// with sets the change's half-width from the sum of independent variances,
// with the Welch-Satterthwaite degrees of freedom of the sum (infinite when
// no part is estimated).
func (c ChangeCI) with(parts ...varPart) ChangeCI {
	var v, den float64
	for _, p := range parts {
		v += p.v
		if p.v > 0 {
			den += p.v * p.v / p.df
		}
	}
	c.DF = math.Inf(1)
	if den > 0 {
		c.DF = v * v / den
	}
	c.Half = t975(c.DF) * math.Sqrt(v)
	c.Known = true
	return c
}

// BetweenRuns is the variance of a log ratio between runs of the same
// spec beyond what each run's own variance holds: the machine's state
// (its other load, its clock, what ran before) moves every ratio of a run
// together, which no unit of that run can see. It is estimated from
// several runs: the variance of their log ratios less the mean of their
// own variances, at least 0, with k-1 degrees of freedom for k runs.
type BetweenRuns struct {
	Var, VarVar float64
	DF          int
}

// EstimateBetweenRuns estimates it from k ≥ 2 runs' log ratios and their
// own variances; with fewer it is unknown (DF 0).
func EstimateBetweenRuns(logs, vars []float64) BetweenRuns {
	k := len(logs)
	if k < 2 || len(vars) != k {
		return BetweenRuns{}
	}
	m := stats.Mean(logs)
	var ss float64
	for _, x := range logs {
		ss += (x - m) * (x - m)
	}
	s2 := ss / float64(k-1)
	return BetweenRuns{Var: math.Max(s2-stats.Mean(vars), 0), VarVar: 2 * s2 * s2 / float64(k-1), DF: k - 1}
}

// CompareToRuns compares a ratio of one run (its log shown, its spread)
// with the mean log ratio of several baseline runs: the variance of the
// change is the new run's, the baselines' mean's, and the runs' own
// spread between runs (br) once for the new run and once over k for the
// baselines' mean; Satterthwaite gives the degrees of freedom.
func CompareToRuns(nowLog float64, now Spread, oldLogs []float64, olds []Spread, pool Between, br BetweenRuns) ChangeCI {
	k := float64(len(olds))
	c := ChangeCI{Log: nowLog - stats.Mean(oldLogs)}
	if len(olds) == 0 || len(oldLogs) != len(olds) || bad(c.Log) {
		return c
	}
	var parts []varPart
	vn, dn, ok := now.Variance(pool)
	if !ok {
		return c
	}
	parts = append(parts, varPart{vn, dn})
	for _, o := range olds {
		vo, do, ok := o.Variance(pool)
		if !ok {
			return c
		}
		parts = append(parts, varPart{vo / (k * k), do})
	}
	if br.Var > 0 {
		f := 1 + 1/k
		parts = append(parts, varPart{f * br.Var, 2 * br.Var * br.Var / br.VarVar})
	}
	return c.with(parts...)
}

// usable keeps the units the estimator can use (finite, positive where it
// takes logs), ordered by instance and unit.
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
	return out
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

// estimate is the estimator's ratio over the units, NaN when it has none.
func estimate(us []PairedUnit, est Estimator) float64 {
	if len(us) == 0 {
		return math.NaN()
	}
	var sum, sumRef float64
	for _, u := range us {
		if est == GeoMeanOfRatios {
			sum += math.Log(u.Mode / u.Ref)
		} else {
			sum += u.Mode
			sumRef += u.Ref
		}
	}
	if est == GeoMeanOfRatios {
		return math.Exp(sum / float64(len(us)))
	}
	return stats.Ratio(sum, sumRef)
}

// z975 is the standard normal's 97.5th percentile.
const z975 = 1.959963984540054

// t975s are Student's t 97.5th percentiles for 1..30 degrees of freedom.
var t975s = []float64{12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
	2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
	2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423}

// t975 is Student's t 97.5th percentile for df degrees of freedom, which
// Satterthwaite makes fractional: the table up to 30, interpolated in 1/df
// between its entries (off by under 0.5 % from 1 up), then the
// Cornish-Fisher expansion (off by under 1e-4). Below 1: infinite.
func t975(df float64) float64 {
	switch {
	case math.IsNaN(df) || df < 1:
		return math.Inf(1)
	case math.IsInf(df, 1):
		return z975
	case df <= float64(len(t975s)):
		lo := math.Floor(df)
		if lo == df {
			return t975s[int(lo)-1]
		}
		a, b := t975s[int(lo)-1], t975s[int(lo)]
		w := (1/lo - 1/df) / (1/lo - 1/(lo+1))
		return a + w*(b-a)
	}
	z, v := z975, df
	z3, z5 := z*z*z, z*z*z*z*z
	return z + (z3+z)/(4*v) + (5*z5+16*z3+3*z)/(96*v*v)
}

// fQuantile is the F distribution's quantile for d1, d2 degrees of
// freedom at the normal quantile z, by Paulson's normal approximation
// (within a few % for d1 ≥ 2; it only decides when a mode's instances
// disagree with the pool). d2 < 1 stands for infinitely many.
func fQuantile(d1, d2 int, z float64) float64 {
	if d1 < 1 {
		return math.Inf(1)
	}
	if d2 < 1 {
		d2 = 1 << 20
	}
	a, b := 2/(9*float64(d1)), 2/(9*float64(d2))
	// Solve ((1-b)x − (1-a)) = z √(b x² + a) for x = F^(1/3).
	A := (1-b)*(1-b) - z*z*b
	B := -2 * (1 - b) * (1 - a)
	C := (1-a)*(1-a) - z*z*a
	disc := B*B - 4*A*C
	if A <= 0 || disc < 0 {
		return math.Inf(1)
	}
	x := (-B + math.Sqrt(disc)) / (2 * A)
	return x * x * x
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

// DiffOf is the difference of the units' means, mean(Mode) − mean(Ref),
// with its 95 % interval from the same two variance components as a
// ratio's, taken on the units' differences rather than their logs. The
// instances' variance is this metric's own: counts of different modes
// differ in scale, so there is nothing to pool them with.
func DiffOf(units []PairedUnit) DiffInterval {
	us := usable(units, RatioOfMeans)
	groups := byInstance(us)
	d := DiffInterval{Diff: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Units: len(us), Instances: len(groups)}
	if len(us) == 0 {
		return d
	}
	ys := make([]float64, len(us))
	for i, u := range us {
		ys[i] = u.Mode - u.Ref
	}
	d.Diff = stats.Mean(ys)
	s := Spread{Ratio: d.Diff, Units: len(us), Instances: len(groups)}
	s.components(ys, groups, d.Diff)
	v, df, ok := s.Variance(Pool(s))
	if !ok || bad(d.Diff) {
		return d
	}
	h := t975(df) * math.Sqrt(v)
	d.Lo, d.Hi = d.Diff-h, d.Diff+h
	return d
}
