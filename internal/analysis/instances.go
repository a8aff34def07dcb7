package analysis

import (
	"maps"
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis/stats"
)

// InstanceRow is one mode's metric against the reference on each instance
// of its lab: a lab instance can be faster or slower than another of the
// same mode for a whole run, and this is how much.
type InstanceRow struct {
	Mode string `json:"mode"`
	// Ratios holds, per instance, the median over the instance's units of
	// the unit's ratio: the mode's value over the reference's on the same
	// unit (the same message sizes, the same repetition), so like meets like.
	Ratios []float64 `json:"ratios"`
	// Spread is max/min - 1 of Ratios: 0.05 means the luckiest instance
	// was 5 % faster than the unluckiest.
	Spread float64 `json:"spread"`
}

// Instances returns a row per series of the case but the reference, for a
// run with several instances of each lab, on the metric key: per unit of
// the plan the series' value over the reference's (a sweep's: the medians
// of the chunk's samples, every size pooled; a case's: the repetition's
// figures). Units where either side has no value are skipped.
func Instances(c Case, ref, key string, instances int) []InstanceRow {
	if instances < 2 {
		return nil
	}
	refs, inst := c.unitValues(ref, key)
	var rows []InstanceRow
	for _, s := range c.Series() {
		if s == ref {
			continue
		}
		mine, _ := c.unitValues(s, key)
		per := make([][]float64, instances)
		for _, u := range slices.Sorted(maps.Keys(mine)) {
			b, ok := refs[u]
			if !ok {
				continue
			}
			if i := inst[u]; i >= 0 && i < instances {
				per[i] = append(per[i], mine[u]/b)
			}
		}
		row := InstanceRow{Mode: s, Spread: math.NaN()}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, rs := range per {
			r := math.NaN()
			if len(rs) > 0 {
				r = stats.Median(rs)
				lo, hi = min(lo, r), max(hi, r)
			}
			row.Ratios = append(row.Ratios, r)
		}
		if lo > 0 && !math.IsInf(lo, 1) {
			row.Spread = hi/lo - 1
		}
		rows = append(rows, row)
	}
	return rows
}

// unitValues are the series' value of the metric per unit of the plan,
// with each unit's lab instance.
func (c Case) unitValues(series, key string) (map[int]float64, map[int]int) {
	if c.Sweep != nil {
		m, ok := MetricByKey(key)
		if !ok {
			return nil, nil
		}
		return c.Sweep.units(series, m)
	}
	vals, inst := map[int]float64{}, map[int]int{}
	for u, o := range c.units[series] {
		if x, ok := o.values[key]; ok && !bad(x) {
			vals[u], inst[u] = x, o.instance
		}
	}
	return vals, inst
}

// InstanceValues are the series' values of the metric key per lab
// instance, one per unit of the plan that ran on it (a case's
// repetitions; a sweep's chunks, each the median of its samples), in the
// units' order: what an export gives per instance.
func (c Case) InstanceValues(series, key string) map[int][]float64 {
	vals, inst := c.unitValues(series, key)
	out := map[int][]float64{}
	for _, u := range slices.Sorted(maps.Keys(vals)) {
		i, ok := inst[u]
		if !ok {
			continue
		}
		out[i] = append(out[i], vals[u])
	}
	return out
}
