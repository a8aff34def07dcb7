package analysis

import (
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/stats"
)

// Change is a statistic with its change against the reference's value of
// the same statistic (seed 000, Tables 7-15).
type Change struct {
	Value   float64
	Percent float64 // (Value-RefValue)/RefValue*100; NaN without a reference, a NaN value or RefValue 0
	// Class is "ref" for the reference series; otherwise "better" or
	// "worse" when |Percent| >= same (and Percent != 0), else "same"; ""
	// when Percent is NaN.
	Class string
}

// SummaryRow is one series' summary of a metric; every statistic carries
// its % change against the reference.
type SummaryRow struct {
	Series                              string
	N                                   int
	Min, Max, Mean, Median, SD, P5, P95 Change
}

// change compares v with the reference value ref. higher says whether a
// higher value is better.
func change(v, ref float64, isRef, hasRef, higher bool, same float64) Change {
	c := Change{Value: v, Percent: math.NaN()}
	switch {
	case isRef:
		c.Class = "ref"
		if !math.IsNaN(v) {
			c.Percent = 0
		}
		return c
	case !hasRef || math.IsNaN(v) || math.IsNaN(ref) || ref == 0:
		return c
	}
	c.Percent = (v - ref) / ref * 100
	switch {
	case c.Percent == 0 || math.Abs(c.Percent) < same:
		c.Class = "same"
	case (c.Percent > 0) == higher:
		c.Class = "better"
	default:
		c.Class = "worse"
	}
	return c
}

// summary is the statistics of a Summary row before comparison.
type summary struct {
	n                                   int
	min, max, mean, median, sd, p5, p95 float64
}

func (d Dataset) summarize(series string, m Metric) summary {
	v := d.values(series, m) // sorted
	return summary{n: len(v), min: stats.Quantile(v, 0), max: stats.Quantile(v, 1), mean: stats.Mean(v),
		median: stats.Quantile(v, 0.5), sd: stats.StdDev(v), p5: stats.Quantile(v, 0.05), p95: stats.Quantile(v, 0.95)}
}

// Summary returns per series the metric's min, max, mean, median, sample
// SD and 5th/95th percentiles (type 7), each with its % change against the
// reference. same is the threshold in percent below which a change counts
// as "same". Direction follows m.HigherIsBetter, except for SD, where lower
// is better for every metric (a steadier measurement).
func (d Dataset) Summary(m Metric, same float64) []SummaryRow {
	hasRef := d.Reference != ""
	var ref summary
	if hasRef {
		ref = d.summarize(d.Reference, m)
	}
	hb := m.HigherIsBetter
	var rows []SummaryRow
	for _, s := range d.Series {
		x := d.summarize(s, m)
		isRef := hasRef && s == d.Reference
		rows = append(rows, SummaryRow{Series: s, N: x.n,
			Min:    change(x.min, ref.min, isRef, hasRef, hb, same),
			Max:    change(x.max, ref.max, isRef, hasRef, hb, same),
			Mean:   change(x.mean, ref.mean, isRef, hasRef, hb, same),
			Median: change(x.median, ref.median, isRef, hasRef, hb, same),
			SD:     change(x.sd, ref.sd, isRef, hasRef, false, same),
			P5:     change(x.p5, ref.p5, isRef, hasRef, hb, same),
			P95:    change(x.p95, ref.p95, isRef, hasRef, hb, same),
		})
	}
	return rows
}

// DeviationRow is seed 004's Table I for one series.
type DeviationRow struct {
	Series  string
	Samples int   // successful samples
	Bytes   int64 // sum of their Length
	Sizes   int   // message sizes that entered the RSD (>= 2 defined values, mean != 0)
	// Relative standard deviation in %: per message size, sample SD over
	// the mean of that size's metric values; min, average and max over
	// sizes. NaN when Sizes == 0.
	MinRSD, AvgRSD, MaxRSD float64
}

// Deviation returns per series the data volume and the min / average / max
// relative standard deviation of the metric across message sizes.
func (d Dataset) Deviation(m Metric) []DeviationRow {
	var rows []DeviationRow
	for _, s := range d.Series {
		row := DeviationRow{Series: s, Samples: len(d.OK[s])}
		for _, smp := range d.OK[s] {
			row.Bytes += int64(smp.Length)
		}
		bySize := map[int][]float64{}
		for _, p := range d.points(s, m) {
			bySize[p.size] = append(bySize[p.size], p.value)
		}
		var rsd []float64
		for _, v := range bySize {
			mean := stats.Mean(v)
			if len(v) < 2 || mean == 0 {
				continue
			}
			rsd = append(rsd, stats.StdDev(v)/math.Abs(mean)*100)
		}
		slices.Sort(rsd) // a fixed order: the average must not depend on map order
		row.Sizes = len(rsd)
		row.MinRSD, row.AvgRSD, row.MaxRSD = stats.Min(rsd), stats.Mean(rsd), stats.Max(rsd)
		rows = append(rows, row)
	}
	return rows
}
