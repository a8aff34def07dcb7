// Package analysis turns stored samples into the numbers people compare:
// per-mode medians and their ratios to the reference mode.
package analysis

import (
	"math"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
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
	// message sizes (PingPongSet.Ratio): not the quotient of the medians
	// above when the modes measured different sizes.
	TransferRatio float64 `json:"transfer_ratio"`
	InnerRatio    float64 `json:"inner_ratio"`
	LatencyRatio  float64 `json:"latency_ratio"`
	RPSRatio      float64 `json:"rps_ratio"`
}

// DefaultBins is the most size groups (Dataset.Grouping) over which the
// summary's ratios pair modes: the report's default, so `cnperf summary`
// and the report's summary agree.
const DefaultBins = 100

// CellRate is one finished cell's requests per second. Cells of the same
// chunk sent the same message sizes, whatever their mode.
type CellRate struct {
	Mode  string
	Chunk int
	Rate  float64
}

// PingPongSet is one run's ping-pong samples and cell rates by mode, for
// the summary's rows and for ratios between any two of its modes.
type PingPongSet struct {
	d     Dataset
	modes []string
	cells map[string]map[int][]float64 // mode → chunk → rates
}

// NewPingPongSet keeps the samples and cell rates of the given modes.
func NewPingPongSet(samples []record.Sample, cells []CellRate, modes []string) PingPongSet {
	by := map[string][]record.Sample{}
	want := map[string]bool{}
	for _, m := range modes {
		want[m] = true
		by[m] = nil
	}
	for _, s := range samples {
		if want[s.Mode] {
			by[s.Mode] = append(by[s.Mode], s)
		}
	}
	p := PingPongSet{modes: modes, cells: map[string]map[int][]float64{}}
	if len(modes) > 0 { // NewDataset takes every key for no modes
		p.d, _ = NewDataset(modes, by, "")
	}
	for _, c := range cells {
		if !want[c.Mode] || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
			continue
		}
		if p.cells[c.Mode] == nil {
			p.cells[c.Mode] = map[int][]float64{}
		}
		p.cells[c.Mode][c.Chunk] = append(p.cells[c.Mode][c.Chunk], c.Rate)
	}
	return p
}

// Row returns a mode's medians, without ratios.
func (p PingPongSet) Row(mode string) ModeRow {
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
func (p PingPongSet) Ratio(mode, under, key string) float64 {
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
func (p PingPongSet) Rows(reference string) []ModeRow {
	hasRef := false
	for _, m := range p.modes {
		hasRef = hasRef || m == reference
	}
	var rows []ModeRow
	for _, m := range p.modes {
		r := p.Row(m)
		if hasRef {
			r.TransferRatio = p.Ratio(m, reference, "transfer")
			r.InnerRatio = p.Ratio(m, reference, "latency")
			r.LatencyRatio = p.Ratio(m, reference, "outer")
			r.RPSRatio = p.Ratio(m, reference, "cell_rps")
		}
		rows = append(rows, r)
	}
	return rows
}
