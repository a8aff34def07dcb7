package analysis

import (
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
)

// CellUnit says which unit of the plan (a chunk of sizes) a cell ran, and
// on which instance of its mode's lab.
type CellUnit struct {
	Chunk    int
	Instance int
}

// InstanceRow is one mode's transfer rate against the reference on each
// instance of its lab: a lab instance can be faster or slower than another
// of the same mode for a whole run, and this is how much.
type InstanceRow struct {
	Mode string `json:"mode"`
	// Ratios holds, per instance, the median over the instance's chunks of
	// the chunk's ratio: the mode's median transfer rate over the reference's
	// on the same chunk (the same message sizes), so like meets like.
	Ratios []float64 `json:"ratios"`
	// Spread is max/min - 1 of Ratios: 0.05 means the luckiest instance
	// was 5 % faster than the unluckiest.
	Spread float64 `json:"spread"`
}

// InstanceSpread returns a row per mode but the reference, for a run with
// several instances of each lab (cells maps a cell's index to its chunk and
// instance). Chunks where either side has no successful sample are skipped.
func InstanceSpread(samples []record.Sample, cells map[int]CellUnit, modes []string, reference string, instances int) []InstanceRow {
	if instances < 2 {
		return nil
	}
	type key struct {
		mode  string
		chunk int
	}
	rates := map[key][]float64{}
	instOf := map[int]int{} // chunk → instance
	for _, s := range samples {
		cu, ok := cells[s.Cell]
		if !ok || !s.OK() {
			continue
		}
		if r := s.TransferRate(); r > 0 {
			k := key{s.Mode, cu.Chunk}
			rates[k] = append(rates[k], r)
			instOf[cu.Chunk] = cu.Instance
		}
	}
	chunks := make([]int, 0, len(instOf))
	for c := range instOf {
		chunks = append(chunks, c)
	}
	slices.Sort(chunks)
	var rows []InstanceRow
	for _, m := range modes {
		if m == reference {
			continue
		}
		per := make([][]float64, instances)
		for _, c := range chunks {
			mine, ref := rates[key{m, c}], rates[key{reference, c}]
			if len(mine) == 0 || len(ref) == 0 {
				continue
			}
			if i := instOf[c]; i >= 0 && i < instances {
				per[i] = append(per[i], stats.Median(mine)/stats.Median(ref))
			}
		}
		row := InstanceRow{Mode: m, Spread: math.NaN()}
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
