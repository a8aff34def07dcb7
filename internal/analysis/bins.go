package analysis

import (
	"math"

	"github.com/cnperf/cnperf/internal/stats"
)

// Bin describes a metric over the samples whose size lies in [Lo, Hi)
// bytes (the last bin of a set is closed: [Lo, Hi]). Quantiles are R type 7
// (stats.Quantile); all are NaN when N == 0.
type Bin struct {
	Lo, Hi                    float64
	N                         int
	P5, P25, Median, P75, P95 float64
}

// binOf returns the index of size among n equal-width bins over
// [0, maxSize], the last bin closed; sizes outside fall into the first or
// last bin. With maxSize <= 0 every size falls into the last bin.
func binOf(size, maxSize, n int) int {
	if maxSize <= 0 {
		return n - 1
	}
	i := int(int64(max(size, 0)) * int64(n) / int64(maxSize)) // exact floor
	return min(i, n-1)
}

// binEdges returns the bounds of bin i of n over [0, maxSize]. Lo is
// i·maxSize/n computed from exact integers, so a size s lies in bin i
// exactly when Lo <= s < Hi (binOf's integer rule).
func binEdges(i, maxSize, n int) (lo, hi float64) {
	m := int64(max(maxSize, 0))
	return float64(int64(i)*m) / float64(n), float64(int64(i+1)*m) / float64(n)
}

// binned splits the series' metric values into n size bins in one pass
// over its value-sorted points, so every bin's values come out sorted.
// nil for n < 1.
func (d Dataset) binned(series string, m Metric, n int) [][]float64 {
	if n < 1 {
		return nil
	}
	p := d.points(series, m)
	idx := make([]int, len(p))
	count := make([]int, n)
	for k, x := range p {
		idx[k] = binOf(x.size, d.MaxSize, n)
		count[idx[k]]++
	}
	buf := make([]float64, len(p))
	out := make([][]float64, n)
	off := 0
	for i, c := range count {
		out[i] = buf[off : off : off+c]
		off += c
	}
	for k, x := range p {
		out[idx[k]] = append(out[idx[k]], x.value)
	}
	return out
}

// Bins returns the series' metric in n equal-width size bins over
// [0, MaxSize] (the last bin closed). An unknown series gives n empty
// bins; n < 1 gives nil.
func (d Dataset) Bins(series string, m Metric, n int) []Bin {
	vals := d.binned(series, m, n)
	bins := make([]Bin, len(vals))
	for i, v := range vals {
		lo, hi := binEdges(i, d.MaxSize, n)
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

// LossBin is, for the sizes in [Lo, Hi), a series' median divided by the
// median of the series it is compared with (001's loss line, eq. 3: the
// division of two median lines). Ratio is NaN when either bin is empty.
type LossBin struct {
	Lo, Hi  float64
	Ratio   float64
	N, RefN int
}

// ratioBins divides over's bin medians by under's.
func (d Dataset) ratioBins(over, under string, m Metric, n int) []LossBin {
	a := d.binned(over, m, n)
	b := d.binned(under, m, n)
	out := make([]LossBin, len(a))
	for i := range a {
		lo, hi := binEdges(i, d.MaxSize, n)
		out[i] = LossBin{Lo: lo, Hi: hi, N: len(a[i]), RefN: len(b[i]),
			Ratio: stats.Ratio(stats.Quantile(a[i], 0.5), stats.Quantile(b[i], 0.5))}
	}
	return out
}

// Loss returns, per size bin, the series' median over the reference's
// median. Without a reference every ratio is NaN (RefN 0); n < 1 gives nil.
func (d Dataset) Loss(series string, m Metric, n int) []LossBin {
	return d.ratioBins(series, d.Reference, m, n)
}

// Impact is one layer's cost on top of the layer below it (seed 004).
type Impact struct {
	Name, Formula string // Name: the layer, with " · run" when several runs
	Over, Under   string // the series divided and the one it is divided by
	Bins          []LossBin
	Median        float64 // median of the bins' ratios (NaN bins left out)
}

// layers are seed 004's layered impacts. 004 divides transfer rates at
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
	{"container", "bridge", "bare", "004 eq. 1"},
	{"overlay (SDN)", "overlay", "bridge", "004 eq. 4"},
	{"encryption", "overlay-encrypted", "overlay", "004 eq. 5"},
	{"overlay-userspace", "overlay-userspace", "bridge", "as 004 eq. 4"},
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

// SplitRow compares a series with the reference for small and big messages
// (seed 001, Tables II and III).
type SplitRow struct {
	Series       string
	SmallN, BigN int
	Small, Big   float64 // median(series)/median(reference) over sizes < split / >= split
}

// SmallBig returns a row per series, the reference included (ratios 1).
// Ratios are NaN without a reference or when either side is empty.
func (d Dataset) SmallBig(m Metric, split int) []SplitRow {
	halves := func(s string) (small, big []float64) {
		for _, p := range d.points(s, m) { // value-sorted: both halves come out sorted
			if p.size < split {
				small = append(small, p.value)
			} else {
				big = append(big, p.value)
			}
		}
		return small, big
	}
	refSmall, refBig := halves(d.Reference)
	rs, rb := stats.Quantile(refSmall, 0.5), stats.Quantile(refBig, 0.5)
	var rows []SplitRow
	for _, s := range d.Series {
		small, big := halves(s)
		rows = append(rows, SplitRow{Series: s, SmallN: len(small), BigN: len(big),
			Small: stats.Ratio(stats.Quantile(small, 0.5), rs), Big: stats.Ratio(stats.Quantile(big, 0.5), rb)})
	}
	return rows
}
