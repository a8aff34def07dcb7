package analysis

import (
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// RatioCI is one mode's ratio to the reference on one metric, with its
// confidence interval: what the summary, the report and `cnperf check`
// show and judge.
type RatioCI struct {
	Case   string // socket test case; "" for ping-pong
	Mode   string // the series
	Metric workload.Metric
	Interval
	Headline bool // a headline metric: ping-pong's four, a case's Headline
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

// PingPongUnits holds a run's successful ping-pong samples by mode, unit
// (chunk) and size, and each cell's request rate, for paired intervals.
type PingPongUnits struct {
	bySize map[string]map[int]map[int][]record.Sample // mode → chunk → size → samples
	rates  map[string]map[int][]float64               // mode → chunk → cell rates
	inst   map[int]int                                // chunk → instance
}

// NewPingPongUnits groups samples by the unit of their cell (cells maps a
// cell's index to its chunk and instance); samples of unknown cells, as in
// imported data, are left out.
func NewPingPongUnits(samples []record.Sample, cells map[int]CellUnit, rates []CellRate) PingPongUnits {
	p := PingPongUnits{bySize: map[string]map[int]map[int][]record.Sample{}, rates: map[string]map[int][]float64{}, inst: map[int]int{}}
	for _, cu := range cells {
		p.inst[cu.Chunk] = cu.Instance
	}
	for _, s := range samples {
		cu, ok := cells[s.Cell]
		if !ok || !s.OK() || s.DurationMS <= 0 {
			continue
		}
		if p.bySize[s.Mode] == nil {
			p.bySize[s.Mode] = map[int]map[int][]record.Sample{}
		}
		if p.bySize[s.Mode][cu.Chunk] == nil {
			p.bySize[s.Mode][cu.Chunk] = map[int][]record.Sample{}
		}
		p.bySize[s.Mode][cu.Chunk][s.Size] = append(p.bySize[s.Mode][cu.Chunk][s.Size], s)
	}
	for _, c := range rates {
		if _, ok := p.inst[c.Chunk]; !ok || bad(c.Rate) {
			continue
		}
		if p.rates[c.Mode] == nil {
			p.rates[c.Mode] = map[int][]float64{}
		}
		p.rates[c.Mode][c.Chunk] = append(p.rates[c.Mode][c.Chunk], c.Rate)
	}
	return p
}

// Paired returns, per chunk both modes ran, the mode's ratio to under on a
// summary column: for the per-request metrics the median over the chunk's
// sizes of the ratio of the two cells' medians at that size (like with
// like, as the tables pair size bins); for "cell_rps" the ratio of the
// cells' rates. Each unit carries the ratio as Mode, with Ref 1.
func (p PingPongUnits) Paired(mode, under, key string) []PairedUnit {
	var out []PairedUnit
	if key == "cell_rps" {
		for chunk, a := range p.rates[mode] {
			if b, ok := p.rates[under][chunk]; ok {
				out = append(out, PairedUnit{Instance: p.inst[chunk], Unit: chunk, Mode: stats.Ratio(stats.Median(a), stats.Median(b)), Ref: 1})
			}
		}
		return out
	}
	m, ok := MetricByKey(key)
	if !ok {
		return nil
	}
	for chunk, sizes := range p.bySize[mode] {
		ref, ok := p.bySize[under][chunk]
		if !ok {
			continue
		}
		var rs []float64
		for size, a := range sizes {
			if b, ok := ref[size]; ok {
				if r := stats.Ratio(medianOf(a, m), medianOf(b, m)); !bad(r) {
					rs = append(rs, r)
				}
			}
		}
		if len(rs) > 0 {
			out = append(out, PairedUnit{Instance: p.inst[chunk], Unit: chunk, Mode: stats.Median(rs), Ref: 1})
		}
	}
	return out
}

// medianOf is the median of the metric's defined values of samples.
func medianOf(samples []record.Sample, m Metric) float64 {
	v := make([]float64, 0, len(samples))
	for _, s := range samples {
		if x := m.Value(s); !bad(x) {
			v = append(v, x)
		}
	}
	return stats.Median(v)
}

// PingPongIntervals returns, for every mode but the reference and every
// ping-pong metric, the summary's ratio (PingPongSet.Ratio) with its
// interval from the paired units, moved onto that ratio. The instances'
// variance of a metric is pooled over the modes (Pool).
func PingPongIntervals(set PingPongSet, units PingPongUnits, modes []string, ref string) []RatioCI {
	if !slices.Contains(modes, ref) {
		return nil
	}
	var out []RatioCI
	for _, m := range registry.PingPong().Metrics() {
		var spreads []Spread
		var names []string
		for _, mode := range modes {
			if mode == ref {
				continue
			}
			spreads = append(spreads, Measure(units.Paired(mode, ref, m.Key), GeoMeanOfRatios))
			names = append(names, mode)
		}
		pool := Pool(spreads...)
		for i, s := range spreads {
			iv := s.Interval(pool).Around(set.Ratio(names[i], ref, m.Key))
			out = append(out, RatioCI{Mode: names[i], Metric: m, Interval: iv, Headline: true, Spread: s})
		}
	}
	slices.SortStableFunc(out, func(a, b RatioCI) int {
		return slices.Index(modes, a.Mode) - slices.Index(modes, b.Mode)
	})
	return out
}

// SocketIntervals returns, per case, mode but the reference and metric of
// the case, the change of the mean the case's table shows with its
// interval. A repetition is paired with the reference's repetition of the
// same unit (cells maps a cell to it; the repetition number when the cell
// is unknown) and carries its instance.
func SocketIntervals(cases []SocketCase, obs []SocketObs, cells map[int]CellUnit, ref string) []RatioCI {
	type key struct {
		kase, series string
	}
	by := map[key][]SocketObs{}
	for _, o := range obs {
		by[key{o.Case, o.Series}] = append(by[key{o.Case, o.Series}], o)
	}
	var out, order []RatioCI
	for _, c := range cases {
		head, _ := c.Headline()
		means := map[string]map[string]float64{}
		for _, r := range c.Rows {
			means[r.Series] = map[string]float64{}
			for k, st := range r.Stats {
				means[r.Series][k] = st.Mean.Value
			}
		}
		if means[ref] == nil {
			continue
		}
		refUnits := unitsOf(by[key{c.Label, ref}], cells)
		for _, m := range c.Metrics {
			var spreads []Spread
			var rows []SocketRow
			for _, r := range c.Rows {
				if r.Series == ref {
					continue
				}
				mine := unitsOf(by[key{c.Label, r.Series}], cells)
				spreads = append(spreads, Measure(pairObs(mine, refUnits, m.Key), RatioOfMeans))
				rows = append(rows, r)
			}
			pool := Pool(spreads...)
			for i, r := range rows {
				iv := spreads[i].Interval(pool).Around(stats.Ratio(means[r.Series][m.Key], means[ref][m.Key]))
				ci := RatioCI{Case: c.Label, Mode: r.Series, Metric: m, Interval: iv, Headline: m.Key == head.Key, Spread: spreads[i]}
				if m.Count {
					mine := unitsOf(by[key{c.Label, r.Series}], cells)
					d := DiffOf(pairObs(mine, refUnits, m.Key)).Around(means[r.Series][m.Key] - means[ref][m.Key])
					ci.Diff = &d
				}
				order = append(order, ci)
			}
		}
		// One mode's metrics together, as the tables list them.
		for _, r := range c.Rows {
			for _, ci := range order {
				if ci.Mode == r.Series {
					out = append(out, ci)
				}
			}
		}
		order = order[:0]
	}
	return out
}

// unitObs is a repetition with its unit and instance.
type unitObs struct {
	unit, instance int
	values         map[string]float64
}

func unitsOf(obs []SocketObs, cells map[int]CellUnit) map[int]unitObs {
	out := map[int]unitObs{}
	for _, o := range obs {
		u := unitObs{unit: o.Rep, values: o.Values}
		if cu, ok := cells[o.Cell]; ok {
			u.unit, u.instance = cu.Chunk, cu.Instance
		}
		out[u.unit] = u
	}
	return out
}

// pairObs pairs the units both sides measured the metric on.
func pairObs(mine, ref map[int]unitObs, metric string) []PairedUnit {
	var out []PairedUnit
	for k, a := range mine {
		b, ok := ref[k]
		if !ok {
			continue
		}
		x, okA := a.values[metric]
		y, okB := b.values[metric]
		if okA && okB && !math.IsNaN(x) && !math.IsNaN(y) {
			out = append(out, PairedUnit{Instance: a.instance, Unit: k, Mode: x, Ref: y})
		}
	}
	return out
}
