package analysis

import (
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis/stats"
)

// Change is a statistic with its change against the reference's value of
// the same statistic (the 2017 Coherence thesis, Tables 7-15).
type Change struct {
	Value   float64
	Percent float64 // (Value-RefValue)/RefValue*100; NaN without a reference, a NaN value or RefValue 0
	// Class is "ref" for the reference series; otherwise "better" or
	// "worse" when |Percent| >= same (and Percent != 0), else "same"; ""
	// when Percent is NaN.
	Class string
	// Count marks a count (workload.Metric.Count): its change is Diff,
	// which the tables show instead of Percent, and its Class follows
	// Diff's sign when the reference counted nothing.
	Count bool
	Diff  float64 // Value - RefValue; NaN without a reference
}

// SummaryRow is one series' summary of a metric; every statistic carries
// its % change against the reference.
type SummaryRow struct {
	Series                              string
	N                                   int
	Min, Max, Mean, Median, SD, P5, P95 Change
}

// change compares v with the reference. ratio is the value's ratio to the
// reference's (1 = the same); higher says whether a higher value is better.
func change(v, ratio float64, isRef, hasRef, higher bool, same float64) Change {
	c := Change{Value: v, Percent: math.NaN(), Diff: math.NaN()}
	switch {
	case isRef:
		c.Class = "ref"
		if !math.IsNaN(v) {
			c.Percent = 0
		}
		return c
	case !hasRef || math.IsNaN(v) || math.IsNaN(ratio) || math.IsInf(ratio, 0):
		return c
	}
	c.Percent = (ratio - 1) * 100
	c.Class = class(c.Percent, same, higher)
	return c
}

// class colours a change x, a percentage or a count's difference: "same"
// when 0 or within same, else "better" or "worse" by the direction.
func class(x, same float64, higher bool) string {
	switch {
	case x == 0 || math.Abs(x) < same:
		return "same"
	case (x > 0) == higher:
		return "better"
	}
	return "worse"
}

// countChange compares a count v with the reference's count ref: the
// difference, and the class by the percentage while the reference counted
// something, by the difference's sign when it counted nothing.
func countChange(v, ref float64, isRef, hasRef, higher bool, same float64) Change {
	c := change(v, stats.Ratio(v, ref), isRef, hasRef, higher, same)
	c.Count = true
	if isRef || !hasRef || math.IsNaN(v) || math.IsNaN(ref) {
		return c
	}
	c.Diff = v - ref
	if c.Class == "" {
		c.Class = class(c.Diff, 0, higher)
	}
	return c
}

// summaryStats are the statistics of a Summary row, in its order: min,
// max, mean, median, SD, 5th and 95th percentile of sorted values.
var summaryStats = []func(sorted []float64) float64{
	func(v []float64) float64 { return stats.Quantile(v, 0) },
	func(v []float64) float64 { return stats.Quantile(v, 1) },
	stats.Mean,
	median,
	stats.StdDev,
	func(v []float64) float64 { return stats.Quantile(v, 0.05) },
	func(v []float64) float64 { return stats.Quantile(v, 0.95) },
}

// Summary returns per series the metric's min, max, mean, median, sample
// SD and 5th/95th percentiles (type 7) over all its successful samples,
// each with its % change against the reference. The change compares like
// message sizes: per size group (Grouping(n)) the statistic of the series
// over the reference's, then the median of those ratios, so a
// series that measured other sizes than the reference is not judged by its
// size mix (PairedRatio). same is the threshold in percent below which a
// change counts as "same". Direction follows m.HigherIsBetter, except for
// SD, where lower is better for every metric (a steadier measurement).
func (d Dataset) Summary(m Metric, same float64, n int) []SummaryRow {
	hasRef := d.Reference != "" && n >= 1
	var ref map[group][]float64
	if hasRef {
		ref = d.grouped(d.Reference, m, n, noSplit)
	}
	hb := m.HigherIsBetter
	var rows []SummaryRow
	for _, s := range d.Series {
		v := d.values(s, m) // sorted
		isRef := hasRef && s == d.Reference
		var g map[group][]float64
		if hasRef && !isRef {
			g = d.grouped(s, m, n, noSplit)
		}
		ch := make([]Change, len(summaryStats))
		for i, stat := range summaryStats {
			ratio := math.NaN()
			if g != nil {
				ratio = pairedRatio(g, ref, stat, nil).Ratio
			}
			higher := hb
			if i == 4 { // SD
				higher = false
			}
			ch[i] = change(stat(v), ratio, isRef, hasRef, higher, same)
		}
		rows = append(rows, SummaryRow{Series: s, N: len(v),
			Min: ch[0], Max: ch[1], Mean: ch[2], Median: ch[3], SD: ch[4], P5: ch[5], P95: ch[6]})
	}
	return rows
}

// DeviationRow is Kratzke's (2015) Table I for one series.
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
// relative standard deviation of the metric across message sizes. Nothing
// here divides one series by another: each RSD is within one series and
// one size (like with like), and the min / average / max run over the
// series' own sizes, which Sizes counts.
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
