package analysis

import (
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// RatioCI is one mode's ratio to the reference on one metric, with its
// confidence interval: what the summary, the report and `cnperf check`
// show and judge.
type RatioCI struct {
	Case   string // the case's label; "" for a sweep of message sizes
	Mode   string // the series
	Metric workload.Metric
	Interval
	Headline bool // a headline metric: a sweep's four, a case's Headline
	// Diff is, for a count (Metric.Count), the difference of the means
	// with its interval, which tables show instead of the ratio.
	Diff *DiffInterval
	// Spread is what the interval came from, for comparing runs (CompareRuns).
	Spread Spread
}

// Cost is how much worse than the reference the mode is, in percent, with
// the interval's bounds: 1 - ratio where higher is better, ratio - 1 where
// lower is; negative when the mode is better. NaN bounds when unknown.
func (r RatioCI) Cost() (cost, lo, hi float64) {
	if r.Metric.HigherIsBetter {
		return (1 - r.Ratio) * 100, (1 - r.Hi) * 100, (1 - r.Lo) * 100
	}
	return (r.Ratio - 1) * 100, (r.Lo - 1) * 100, (r.Hi - 1) * 100
}

// Intervals returns, per case, series but the reference and metric of
// the case, the ratio the case's tables show with its 95 % interval from
// the case's paired units (Case.paired), moved onto that ratio; for a
// count also the difference of the means with its interval. The
// instances' variance of a metric is pooled over the case's series (Pool).
// A case without the reference gives none. One series' metrics come
// together, as the tables list them.
func Intervals(cases []Case, ref string) []RatioCI {
	return IntervalsWithin(cases, One(ref))
}

// IntervalsWithin is Intervals with each series paired with its own
// reference (refOf); the variance between lab instances is pooled over the
// series that share a reference.
func IntervalsWithin(cases []Case, refOf RefOf) []RatioCI {
	var out []RatioCI
	for _, c := range cases {
		series := c.Series()
		// The references in the order their first series comes, each with
		// the series compared with it.
		var refs []string
		of := map[string][]string{}
		for _, s := range series {
			ref := refOf(s)
			if s == ref || !slices.Contains(series, ref) {
				continue
			}
			if of[ref] == nil {
				refs = append(refs, ref)
			}
			of[ref] = append(of[ref], s)
		}
		var cis []RatioCI
		for _, m := range c.Metrics {
			for _, ref := range refs {
				var spreads []Spread
				var units [][]PairedUnit
				names := of[ref]
				for _, s := range names {
					us, est := c.paired(s, ref, m.Key)
					spreads = append(spreads, Measure(us, est))
					units = append(units, us)
				}
				pool := Pool(spreads...)
				for i, s := range names {
					ci := RatioCI{Case: c.Label, Mode: s, Metric: m, Interval: spreads[i].Interval(pool).Around(c.ratio(s, ref, m.Key)),
						Headline: c.headline(m), Spread: spreads[i]}
					if m.Count {
						d := DiffOf(units[i]).Around(c.value(s, m.Key) - c.value(ref, m.Key))
						ci.Diff = &d
					}
					cis = append(cis, ci)
				}
			}
		}
		slices.SortStableFunc(cis, func(a, b RatioCI) int { return slices.Index(series, a.Mode) - slices.Index(series, b.Mode) })
		out = append(out, cis...)
	}
	return out
}

// Series are the case's series: a sweep's modes, or the rows' series.
func (c Case) Series() []string {
	if c.Sweep != nil {
		return c.Sweep.modes
	}
	out := make([]string, len(c.Rows))
	for i, r := range c.Rows {
		out[i] = r.Series
	}
	return out
}

// value is what the case's tables show for a series and metric: a sweep's
// summary row (its medians, the median cell rate), a case's mean over its
// repetitions; NaN when the series measured nothing.
func (c Case) value(series, key string) float64 {
	if c.Sweep != nil {
		r := c.Sweep.Row(series)
		if r.Samples == 0 {
			return math.NaN() // not measured: a median of nothing, or 0 cells
		}
		return r.Value(key)
	}
	for _, r := range c.Rows {
		if r.Series == series {
			if st, ok := r.Stats[key]; ok && st.N > 0 {
				return st.Mean.Value
			}
		}
	}
	return math.NaN()
}

// ratio is the series' ratio to under that the case's tables show: a
// sweep's over like message sizes (Sweep.Ratio), since series whose cells
// failed measured other sizes; else the ratio of the means, like with like
// since both series ran this very case.
func (c Case) ratio(series, under, key string) float64 {
	if c.Sweep != nil {
		return c.Sweep.Ratio(series, under, key)
	}
	return stats.Ratio(c.value(series, key), c.value(under, key))
}

// paired pairs the series' units with the reference's and names the
// estimator that combines them: a sweep's chunks, each already a ratio
// (Sweep.Paired), or a case's repetitions of the same unit, whose means
// the tables divide.
func (c Case) paired(series, ref, key string) ([]PairedUnit, Estimator) {
	if c.Sweep != nil {
		return c.Sweep.Paired(series, ref, key), GeoMeanOfRatios
	}
	return c.pairedOf(series, ref, valueOf(key)), RatioOfMeans
}

// pairedOf pairs the repetitions of a case's series with ref's of the same
// unit by the value of reads in their figures (NaN: none).
func (c Case) pairedOf(series, ref string, of func(map[string]float64) float64) []PairedUnit {
	var out []PairedUnit
	mine, theirs := c.units[series], c.units[ref]
	for k, a := range mine {
		b, ok := theirs[k]
		if !ok {
			continue
		}
		if x, y := of(a.values), of(b.values); !math.IsNaN(x) && !math.IsNaN(y) {
			out = append(out, PairedUnit{Instance: a.instance, Unit: k, Mode: x, Ref: y})
		}
	}
	return out
}

// headlines are the metrics a case is judged by: every metric of a
// sweep's summary, else the case's Headline (none when it has none).
func (c Case) headlines() []workload.Metric {
	if c.Sweep != nil {
		return c.Metrics
	}
	if h, ok := c.Headline(); ok {
		return []workload.Metric{h}
	}
	return nil
}

// headline reports whether m is among the case's headlines.
func (c Case) headline(m workload.Metric) bool {
	return slices.ContainsFunc(c.headlines(), func(h workload.Metric) bool { return h.Key == m.Key })
}
