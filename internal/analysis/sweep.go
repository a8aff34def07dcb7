// Package analysis turns stored samples into the numbers people compare:
// per-mode medians and their ratios to the reference mode.
package analysis

import (
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload"
)

// ModeRow is one mode's ping-pong summary.
type ModeRow struct {
	Mode        string  `json:"mode"`
	Samples     int     `json:"samples"`                // successful exchanges
	Failed      int     `json:"failed"`                 // errors, non-200 codes, short bodies
	FailedSizes []int   `json:"failed_sizes,omitempty"` // sizes whose every request failed (ascending)
	TransferMBs float64 `json:"transfer_mbs"`           // median per-request transfer rate, MB/s (10^6 B/s)
	InnerMS     float64 `json:"inner_ms"`               // median ping→pong time (ppbench's time per request)
	LatencyMS   float64 `json:"latency_ms"`             // median siege→ping→siege time
	RPS         float64 `json:"rps"`                    // median over the mode's cells of requests per second
	// Ratios to the reference mode (NaN without a reference), over like
	// message sizes (Sweep.Ratio): not the quotient of the medians
	// above when the modes measured different sizes.
	TransferRatio float64 `json:"transfer_ratio"`
	InnerRatio    float64 `json:"inner_ratio"`
	LatencyRatio  float64 `json:"latency_ratio"`
	RPSRatio      float64 `json:"rps_ratio"`
}

// Value is the row's figure for a ping-pong metric key (transfer, latency,
// outer, cell_rps); NaN for another key.
func (r ModeRow) Value(key string) float64 {
	switch key {
	case "transfer":
		return r.TransferMBs
	case "latency":
		return r.InnerMS
	case "outer":
		return r.LatencyMS
	case "cell_rps":
		return r.RPS
	}
	return math.NaN()
}

// DefaultBins is the most size groups (Dataset.Grouping) over which the
// summary's ratios pair modes: the report's default, so `cnperf summary`
// and the report's summary agree.
const DefaultBins = 100

// Sweep is a case that sweeps message size (ping-pong): one run's
// successful samples and cell rates by series, for the summary's rows, for
// ratios between any two of its series over like sizes, and, grouped by
// the unit of the plan (a chunk of sizes) each cell ran, for paired
// intervals and the spread of lab instances.
type Sweep struct {
	d      Dataset
	modes  []string
	cells  map[string]map[int][]float64               // mode → chunk → rates
	bySize map[string]map[int]map[int][]record.Sample // mode → chunk → size → samples, cells of a known unit
	inst   map[int]int                                // chunk → instance, of the cells known
}

// NewSweep keeps the samples and cell rates of the given modes. cells maps
// a cell's index to its unit, instance and rate; samples of unknown cells,
// as in imported data, enter the rows and ratios but no unit.
func NewSweep(samples []record.Sample, cells map[int]Cell, modes []string) Sweep {
	by := map[string][]record.Sample{}
	want := map[string]bool{}
	for _, m := range modes {
		want[m] = true
		by[m] = nil
	}
	p := Sweep{modes: modes, cells: map[string]map[int][]float64{}, bySize: map[string]map[int]map[int][]record.Sample{}, inst: map[int]int{}}
	for _, cu := range cells {
		p.inst[cu.Chunk] = cu.Instance
	}
	for _, s := range samples {
		if !want[s.Mode] {
			continue
		}
		by[s.Mode] = append(by[s.Mode], s)
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
	if len(modes) > 0 { // NewDataset takes every key for no modes
		p.d, _ = NewDataset(modes, by, "")
	}
	for _, c := range cells {
		if !want[c.Mode] || bad(c.Rate) || c.Rate <= 0 {
			continue
		}
		if p.cells[c.Mode] == nil {
			p.cells[c.Mode] = map[int][]float64{}
		}
		p.cells[c.Mode][c.Chunk] = append(p.cells[c.Mode][c.Chunk], c.Rate)
	}
	return p
}

// Case is the sweep as one case of size sweep w (the run's spec's): the
// summary's headline metrics over its modes, which intervals, drivers and
// instances read like any case.
func (p Sweep) Case(w workload.Workload) Case {
	return Case{Workload: w.Name(), Metrics: w.Metrics(), Sweep: &p}
}

// Row returns a mode's medians, without ratios.
func (p Sweep) Row(mode string) ModeRow {
	transfer, _ := MetricByKey("transfer")
	inner, _ := MetricByKey("latency")
	outer, _ := MetricByKey("outer")
	var rates []float64
	for _, rs := range p.cells[mode] {
		rates = append(rates, rs...)
	}
	return ModeRow{Mode: mode, Samples: len(p.d.OK[mode]), Failed: p.d.Failed[mode], FailedSizes: p.d.FailedSizes[mode],
		TransferMBs: median(p.d.values(mode, transfer)), InnerMS: median(p.d.values(mode, inner)),
		LatencyMS: median(p.d.values(mode, outer)), RPS: stats.Median(rates),
		TransferRatio: math.NaN(), InnerRatio: math.NaN(), LatencyRatio: math.NaN(), RPSRatio: math.NaN()}
}

// Ratio compares mode with under on a summary column ("transfer",
// "latency", "outer" or "cell_rps") over like message sizes: for the
// per-request metrics the median over the size groups (at most
// DefaultBins) of the ratio of the groups' medians (Dataset.PairedRatio),
// each measured size one point when there are few; for requests per second the
// median over the chunks both modes ran of the ratio of their cells'
// rates. Modes measure different sizes when cells failed or the data was
// imported, and a ratio of pooled medians would then compare size mixes.
func (p Sweep) Ratio(mode, under, key string) float64 {
	if key == "cell_rps" {
		var rs []float64
		for chunk, a := range p.cells[mode] {
			if b, ok := p.cells[under][chunk]; ok {
				if r := stats.Ratio(stats.Median(a), stats.Median(b)); !math.IsNaN(r) && !math.IsInf(r, 0) {
					rs = append(rs, r)
				}
			}
		}
		return stats.Median(rs)
	}
	m, ok := MetricByKey(key)
	if !ok {
		return math.NaN()
	}
	return p.d.PairedRatio(mode, under, m, DefaultBins).Ratio
}

// Rows summarises the modes in their order, with ratios to reference
// (none when it is "" or not among the modes). The requests per second are
// the median over the mode's cells: robust to the rare multi-second stall
// of a shared machine, which a total over the run would let dominate.
func (p Sweep) Rows(reference string) []ModeRow {
	return p.RowsWithin(One(reference))
}

// RowsWithin is Rows with each mode's ratios to its own reference (refOf),
// none for a mode whose reference the sweep lacks.
func (p Sweep) RowsWithin(refOf RefOf) []ModeRow {
	var rows []ModeRow
	for _, m := range p.modes {
		r := p.Row(m)
		reference := refOf(m)
		if slices.Contains(p.modes, reference) {
			r.TransferRatio = p.Ratio(m, reference, "transfer")
			r.InnerRatio = p.Ratio(m, reference, "latency")
			r.LatencyRatio = p.Ratio(m, reference, "outer")
			r.RPSRatio = p.Ratio(m, reference, "cell_rps")
		}
		rows = append(rows, r)
	}
	return rows
}

// Paired returns, per chunk both modes ran, the mode's ratio to under on a
// summary column: for the per-request metrics the median over the chunk's
// sizes of the ratio of the two cells' medians at that size (like with
// like, as the tables pair size bins); for "cell_rps" the ratio of the
// cells' rates. Each unit carries the ratio as Mode, with Ref 1: the
// estimator is GeoMeanOfRatios.
func (p Sweep) Paired(mode, under, key string) []PairedUnit {
	var out []PairedUnit
	if key == "cell_rps" {
		for chunk, a := range p.cells[mode] {
			if b, ok := p.cells[under][chunk]; ok {
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

// units are the median of the metric over each chunk's samples of the
// mode, every size pooled, with the chunk's instance: what the spread of
// lab instances compares. Non-positive values are left out.
func (p Sweep) units(mode string, m Metric) (map[int]float64, map[int]int) {
	out := map[int]float64{}
	for chunk, sizes := range p.bySize[mode] {
		var v []float64
		for _, ss := range sizes {
			for _, s := range ss {
				if x := m.Value(s); x > 0 && !bad(x) {
					v = append(v, x)
				}
			}
		}
		if len(v) > 0 {
			out[chunk] = stats.Median(v)
		}
	}
	return out, p.inst
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
