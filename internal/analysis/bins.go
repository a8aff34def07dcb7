package analysis

import (
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/cnperf/cnperf/internal/analysis/stats"
)

// Bin describes a metric over the samples of one size group: the measured
// sizes from Lo to Hi bytes (both measured; Lo == Hi when the group is one
// size). Quantiles are R type 7 (stats.Quantile); all are NaN when N == 0.
type Bin struct {
	Lo, Hi                    float64
	N                         int
	P5, P25, Median, P75, P95 float64
}

// Grouping says how a Dataset groups message sizes to compare like with
// like (see Dataset.Grouping).
type Grouping struct {
	Sizes  int // distinct sizes of successful samples, over every series
	Groups int // groups the sizes are cut into
	// Shared: every two series measured a size in common (cnperf's runs,
	// ab, ppbench with repetitions of a size list), so groups of one size
	// can pair them.
	Shared bool
	lo, hi []int // each group's smallest and largest size, ascending
}

// PerSize reports whether every measured size is its own group: one point
// per size.
func (g Grouping) PerSize() bool { return g.Groups == g.Sizes }

// of returns the index of the group holding size: the last group whose
// smallest size is <= size (the first group for a smaller size).
func (g Grouping) of(size int) int {
	return max(sort.Search(len(g.lo), func(i int) bool { return g.lo[i] > size })-1, 0)
}

// Grouping cuts the distinct sizes of the successful samples (all series
// together) into at most n groups holding equal numbers of sizes, in size
// order. Equal counts, not equal widths: with sizes spaced a few per
// decade (ab's 10, 20, …, 1 000 000) equal-width bins put every size
// below a tenth of the largest into one bin and weight the rest by their
// width; equal counts weight every measured size alike. With at most n
// sizes every size is its own group: one point per measured size.
//
// That needs the series to have measured common sizes. When two series
// measured no size in common (sizes drawn at random per series, as ppbench
// does, or runs of different size plans compared), groups of one size
// could not pair them, so there are at most sizes/series groups: about as
// many as one series measured sizes. n < 1 gives no group.
func (d Dataset) Grouping(n int) Grouping {
	if n < 1 {
		return Grouping{}
	}
	if d.cache != nil {
		d.cache.mu.Lock()
		g, ok := d.cache.groups[n]
		d.cache.mu.Unlock()
		if ok {
			return g
		}
	}
	var per []map[int]bool // each series' distinct sizes
	all := map[int]bool{}
	for _, s := range d.Series {
		seen := map[int]bool{}
		for _, smp := range d.OK[s] {
			seen[smp.Size] = true
			all[smp.Size] = true
		}
		if len(seen) > 0 {
			per = append(per, seen)
		}
	}
	shared := true
	for i := range per {
		for j := i + 1; j < len(per) && shared; j++ {
			shared = common(per[i], per[j])
		}
	}
	sizes := slices.Sorted(maps.Keys(all))
	g := Grouping{Sizes: len(sizes), Shared: shared}
	k := min(n, len(sizes))
	if !shared {
		k = min(k, max(1, len(sizes)/len(per)))
	}
	g.Groups = k
	for i := range k {
		a, b := i*len(sizes)/k, (i+1)*len(sizes)/k // no overflow: len(sizes) <= samples
		g.lo = append(g.lo, sizes[a])
		g.hi = append(g.hi, sizes[b-1])
	}
	if d.cache != nil {
		d.cache.mu.Lock()
		d.cache.groups[n] = g
		d.cache.mu.Unlock()
	}
	return g
}

// common reports whether two sets of sizes meet.
func common(a, b map[int]bool) bool {
	if len(b) < len(a) {
		a, b = b, a
	}
	for size := range a {
		if b[size] {
			return true
		}
	}
	return false
}

// edges returns group i's smallest and largest size.
func (g Grouping) edges(i int) (lo, hi float64) { return float64(g.lo[i]), float64(g.hi[i]) }

// binned splits the series' metric values into the size groups of
// Grouping(n) in one pass over its value-sorted points, so every group's
// values come out sorted.
func (d Dataset) binned(series string, m Metric, n int) (Grouping, [][]float64) {
	g := d.Grouping(n)
	if g.Groups == 0 {
		return g, nil
	}
	p := d.points(series, m)
	idx := make([]int, len(p))
	count := make([]int, g.Groups)
	for k, x := range p {
		idx[k] = g.of(x.size)
		count[idx[k]]++
	}
	buf := make([]float64, len(p))
	out := make([][]float64, g.Groups)
	off := 0
	for i, c := range count {
		out[i] = buf[off : off : off+c]
		off += c
	}
	for k, x := range p {
		out[idx[k]] = append(out[idx[k]], x.value)
	}
	return g, out
}

// Bins returns the series' metric in the size groups of Grouping(n). An
// unknown series gives empty bins; n < 1 gives none.
func (d Dataset) Bins(series string, m Metric, n int) []Bin {
	g, vals := d.binned(series, m, n)
	bins := make([]Bin, len(vals))
	for i, v := range vals {
		lo, hi := g.edges(i)
		bins[i] = Bin{Lo: lo, Hi: hi, N: len(v),
			P5: stats.Quantile(v, 0.05), P25: stats.Quantile(v, 0.25), Median: stats.Quantile(v, 0.5),
			P75: stats.Quantile(v, 0.75), P95: stats.Quantile(v, 0.95)}
	}
	return bins
}

// SmoothBins prepares bins for drawing: each quantile of a non-empty bin is
// replaced by the mean of that quantile over the non-empty bins within
// ±window/2 of it (window 3 averages a bin with its two neighbours; an even
// window w acts as w+1). Empty bins stay NaN; N, Lo and Hi are kept. As
// every bin's quantiles are ordered and the same bins are averaged for
// each, the smoothed quantiles stay ordered. window < 2 returns a copy.
func SmoothBins(b []Bin, window int) []Bin {
	out := make([]Bin, len(b))
	copy(out, b)
	h := window / 2
	if h < 1 {
		return out
	}
	for i := range b {
		if b[i].N == 0 {
			continue
		}
		var s Bin
		k := 0
		for j := max(0, i-h); j <= min(len(b)-1, i+h); j++ {
			if b[j].N == 0 {
				continue
			}
			s.P5 += b[j].P5
			s.P25 += b[j].P25
			s.Median += b[j].Median
			s.P75 += b[j].P75
			s.P95 += b[j].P95
			k++
		}
		f := float64(k)
		out[i].P5, out[i].P25, out[i].Median, out[i].P75, out[i].P95 = s.P5/f, s.P25/f, s.Median/f, s.P75/f, s.P95/f
	}
	return out
}

// LossBin is, for the size group of sizes Lo to Hi, a series' median divided by the
// median of the series it is compared with (001's loss line, eq. 3: the
// division of two median lines). Ratio is NaN when either bin is empty.
type LossBin struct {
	Lo, Hi  float64
	Ratio   float64
	N, RefN int
}

// ratioBins divides over's group medians by under's.
func (d Dataset) ratioBins(over, under string, m Metric, n int) []LossBin {
	g, a := d.binned(over, m, n)
	_, b := d.binned(under, m, n)
	out := make([]LossBin, len(a))
	for i := range a {
		lo, hi := g.edges(i)
		out[i] = LossBin{Lo: lo, Hi: hi, N: len(a[i]), RefN: len(b[i]),
			Ratio: stats.Ratio(stats.Quantile(a[i], 0.5), stats.Quantile(b[i], 0.5))}
	}
	return out
}

// Loss returns, per size group (Grouping(n)), the series' median over the
// reference's median. Without a reference every ratio is NaN (RefN 0);
// n < 1 gives none.
func (d Dataset) Loss(series string, m Metric, n int) []LossBin {
	return d.ratioBins(series, d.Reference, m, n)
}

// Impact is one layer's cost on top of the layer below it (Kratzke 2015).
type Impact struct {
	Name, Formula string // Name: the layer, with " · run" when several runs
	Over, Under   string // the series divided and the one it is divided by
	Bins          []LossBin
	Median        float64 // median of the bins' ratios (NaN bins left out)
}

// layers are Kratzke's (2015) layered impacts. Kratzke divides transfer rates at
// message size m; here each is the ratio of two series' bin medians:
//
//	eq. 1  ∘trans(m) = trans∘(m) / trans□(m): container (Docker) over the
//	       bare reference experiment → "container", bridge over bare.
//	eq. 2  Δtrans(m) = transΔ(m) / trans□(m) and
//	eq. 3  ∇trans(m) = trans∇(m) / trans□(m): SDVN and encrypted SDVN over
//	       the bare reference; these are Loss with the reference "bare".
//	eq. 4  impactΔ(m) = transΔ(m) / trans∘(m): the pure SDVN effect, overlay
//	       over the container → "overlay (SDN)", overlay over bridge; the
//	       same for the userspace overlay → "overlay-userspace" over bridge.
//	eq. 5  impact∇(m) = trans∇(m) / transΔ(m): the pure encryption effect →
//	       "encryption", overlay-encrypted over overlay.
//
// The modes are fixed, whatever the Dataset's Reference: eq. 1's □ is the
// bare experiment.
var layers = []struct{ name, over, under, eq string }{
	{"container", "bridge", "bare", "Kratzke 2015 eq. 1"},
	{"overlay (SDN)", "overlay", "bridge", "Kratzke 2015 eq. 4"},
	{"encryption", "overlay-encrypted", "overlay", "Kratzke 2015 eq. 5"},
	{"overlay-userspace", "overlay-userspace", "bridge", "as Kratzke 2015 eq. 4"},
}

// Impacts returns the layered impacts (see layers) whose two series both
// have successful samples, layer by layer in the order above and within a
// layer run by run, in the order runs first appear in Series. Series
// "mode · run" are matched on the mode within the same run. n < 1 gives nil.
func (d Dataset) Impacts(m Metric, n int) []Impact {
	if n < 1 {
		return nil
	}
	var runs []string
	byRun := map[string]map[string]string{} // run → mode → series
	for _, s := range d.Series {
		mode, run := SplitSeries(s)
		if byRun[run] == nil {
			byRun[run] = map[string]string{}
			runs = append(runs, run)
		}
		if _, dup := byRun[run][mode]; !dup {
			byRun[run][mode] = s
		}
	}
	var out []Impact
	for _, l := range layers {
		for _, run := range runs {
			over, ok1 := byRun[run][l.over]
			under, ok2 := byRun[run][l.under]
			if !ok1 || !ok2 || len(d.OK[over]) == 0 || len(d.OK[under]) == 0 {
				continue
			}
			name := l.name
			if run != "" {
				name += SeriesSep + run
			}
			bins := d.ratioBins(over, under, m, n)
			var rs []float64
			for _, b := range bins {
				if !math.IsNaN(b.Ratio) {
					rs = append(rs, b.Ratio)
				}
			}
			out = append(out, Impact{Name: name,
				Formula: m.Key + "_" + l.over + "(m) / " + m.Key + "_" + l.under + "(m) (" + l.eq + ")",
				Over:    over, Under: under, Bins: bins, Median: stats.Median(rs)})
		}
	}
	return out
}

// group is a set of like message sizes: a size group of Grouping, cut at
// the small/big split so that no group mixes small and big messages.
type group struct {
	bin int
	big bool
}

// noSplit is the split that cuts no bin: every size is from it up.
const noSplit = math.MinInt

// grouped returns the series' metric values per group (the size groups
// of Grouping(n), each cut at split), each group's values sorted.
func (d Dataset) grouped(series string, m Metric, n, split int) map[group][]float64 {
	g := d.Grouping(n)
	out := map[group][]float64{}
	if g.Groups == 0 {
		return out
	}
	for _, p := range d.points(series, m) { // value-sorted: every group comes out sorted
		k := group{g.of(p.size), p.size >= split}
		out[k] = append(out[k], p.value)
	}
	return out
}

// Paired compares two series over like message sizes.
type Paired struct {
	// Ratio is the median over the groups of sizes both series measured of
	// stat(series) / stat(reference) in that group; NaN when no group gives
	// a finite ratio.
	Ratio  float64
	Groups int // groups that gave a ratio
}

// median is stats.Quantile at 0.5 of sorted values.
func median(sorted []float64) float64 { return stats.Quantile(sorted, 0.5) }

// pairedRatio divides stat of each group of over by stat of the same group
// of under, for the groups keep accepts (nil: all), and takes the median.
// Comparing group by group is what keeps unlike size mixes apart: the
// transfer rate grows with the message size, so pooled statistics of two
// series that measured different sizes differ even at equal speed.
func pairedRatio(over, under map[group][]float64, stat func(sorted []float64) float64, keep func(group) bool) Paired {
	var rs []float64
	for k, a := range over {
		b, ok := under[k]
		if !ok || (keep != nil && !keep(k)) {
			continue
		}
		if r := stats.Ratio(stat(a), stat(b)); !math.IsNaN(r) && !math.IsInf(r, 0) {
			rs = append(rs, r)
		}
	}
	return Paired{Ratio: stats.Median(rs), Groups: len(rs)} // the median does not depend on map order
}

// PairedRatio compares the series' metric with under's size group by size
// group (Grouping(n)): the median over the groups both have of the ratio
// of their group medians. NaN for n < 1.
func (d Dataset) PairedRatio(series, under string, m Metric, n int) Paired {
	if n < 1 {
		return Paired{Ratio: math.NaN()}
	}
	return pairedRatio(d.grouped(series, m, n, noSplit), d.grouped(under, m, n, noSplit), median, nil)
}

// SplitRow compares a series with the reference for small and big messages
// (Kratzke and Quint 2015, Tables II and III).
type SplitRow struct {
	Series       string
	SmallN, BigN int // the series' samples below / from the split
	// Small and Big are the median over the size groups below / from the
	// split that both series measured of the series' group median over the
	// reference's; SmallBins and BigBins count those groups.
	Small, Big         float64
	SmallBins, BigBins int
}

// SmallBig returns a row per series, the reference included (ratios 1).
// Each side's ratio compares like with like: per size group (Grouping(n),
// a group straddling split cut in two, one part per side) the series'
// median over the reference's, then the median of those ratios, so every
// measured size (or every group of equally many sizes) weighs the same.
// Pooling a side's samples and dividing the pools' medians would compare
// unlike size mixes whenever the series measured different sizes (imported
// data, failed cells). Ratios are NaN without a reference, for n < 1, or
// when no group of that side has both series.
func (d Dataset) SmallBig(m Metric, split, n int) []SplitRow {
	var ref map[group][]float64
	if d.Reference != "" && n >= 1 {
		ref = d.grouped(d.Reference, m, n, split)
	}
	small := func(k group) bool { return !k.big }
	big := func(k group) bool { return k.big }
	var rows []SplitRow
	for _, s := range d.Series {
		row := SplitRow{Series: s, Small: math.NaN(), Big: math.NaN()}
		for _, p := range d.points(s, m) {
			if p.size < split {
				row.SmallN++
			} else {
				row.BigN++
			}
		}
		if ref != nil {
			g := d.grouped(s, m, n, split)
			ps, pb := pairedRatio(g, ref, median, small), pairedRatio(g, ref, median, big)
			row.Small, row.SmallBins, row.Big, row.BigBins = ps.Ratio, ps.Groups, pb.Ratio, pb.Groups
		}
		rows = append(rows, row)
	}
	return rows
}

// SizeSpan returns the 5th and 95th percentile (type 7) of the distinct
// positive sizes of successful samples, all series together: where the
// measured sizes lie, a stray smallest or largest size left out. Both are
// NaN without such a size.
func (d Dataset) SizeSpan() (lo, hi float64) {
	seen := map[int]bool{}
	var sizes []float64
	for _, s := range d.Series {
		for _, smp := range d.OK[s] {
			if smp.Size > 0 && !seen[smp.Size] {
				seen[smp.Size] = true
				sizes = append(sizes, float64(smp.Size))
			}
		}
	}
	slices.Sort(sizes)
	return stats.Quantile(sizes, 0.05), stats.Quantile(sizes, 0.95)
}
