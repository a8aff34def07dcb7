package analysis

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// The parameters a chain of hosts sweeps (spec.HopsParam, SegmentParam;
// analysis reads stored runs and does not import spec).
const (
	hopsParam    = "hops"
	segmentParam = "segment"
)

// HopTest is one test of a chain run (Zismer's (2016) hops): its headline
// against the hops from the first host, per series, and for latency the
// sum of the segments on the way beside it.
type HopTest struct {
	Test     int
	Label    string // the test, without its hops
	Workload string
	Protocol string
	Metric   workload.Metric // rtt_p50 for rr, throughput for stream
	Hops     []int           // the hop counts measured, ascending
	Rows     []HopRow        // per series, then per hop count
}

// HopRow is one series at one hop count.
type HopRow struct {
	Series string
	Hops   int
	// Mean and SD of the metric over the repetitions to the host Hops
	// away.
	Mean, SD float64
	// SegmentSum adds the segments' means from the first host to that one
	// (segment 1 is the one-hop case, the same two containers); NaN when a
	// segment is missing or the metric does not add up (throughput).
	// Excess is Mean - SegmentSum: what relaying costs beyond its links.
	SegmentSum, Excess float64
	// OfFirst is Mean over the one-hop Mean: what is left after k hops.
	// PerHop is (Mean - the one-hop Mean) / (Hops - 1): what each host
	// crossed on the way adds (NaN at one hop). A segment measured alone
	// also counts both ends' own work, which a longer path pays once: where
	// that work outweighs the links (a lab's, not the paper's WAN), the
	// sum of the segments overstates the path and PerHop is the relaying.
	OfFirst, PerHop float64
}

// Hops gathers the chain cases of a run's cases into one HopTest
// per test that has them, in the tests' order; none for runs without a
// chain.
func Hops(cases []Case) []HopTest {
	var out []HopTest
	at := map[int]int{}
	means := map[int]map[string]hopMeans{} // by test, then series
	for _, c := range cases {
		if c.Param != hopsParam && c.Param != segmentParam {
			continue
		}
		n, err := strconv.Atoi(c.Value)
		if err != nil {
			continue
		}
		if _, ok := at[c.Test]; !ok {
			key := "throughput"
			if registry.Has(c.Workload, workload.RoundTrip) {
				key = workload.RoundTripMetric
			}
			i := slices.IndexFunc(c.Metrics, func(m workload.Metric) bool { return m.Key == key })
			if i < 0 {
				continue
			}
			at[c.Test] = len(out)
			out = append(out, HopTest{Test: c.Test, Label: strings.TrimSuffix(c.Label, " "+c.Param+"="+c.Value),
				Workload: c.Workload, Protocol: c.Protocol, Metric: c.Metrics[i]})
			means[c.Test] = map[string]hopMeans{}
		}
		ht := &out[at[c.Test]]
		for _, row := range c.Rows {
			st, ok := row.Stats[ht.Metric.Key]
			if !ok || st.N == 0 {
				continue
			}
			per := means[c.Test][row.Series]
			if per == nil {
				per = hopMeans{hopsParam: {}, segmentParam: {}}
				means[c.Test][row.Series] = per
			}
			per[c.Param][n] = hopStat{st.Mean.Value, st.SD.Value}
		}
		if i, found := slices.BinarySearch(ht.Hops, n); c.Param == hopsParam && !found {
			ht.Hops = slices.Insert(ht.Hops, i, n)
		}
	}
	for i := range out {
		ht := &out[i]
		var series []string
		for _, c := range cases { // series in the cases' order
			if c.Test != ht.Test {
				continue
			}
			for _, row := range c.Rows {
				if !slices.Contains(series, row.Series) && means[ht.Test][row.Series] != nil {
					series = append(series, row.Series)
				}
			}
		}
		for _, s := range series {
			per := means[ht.Test][s]
			first, hasFirst := per[hopsParam][1]
			for _, k := range ht.Hops {
				st, ok := per[hopsParam][k]
				if !ok {
					continue
				}
				row := HopRow{Series: s, Hops: k, Mean: st.mean, SD: st.sd, SegmentSum: math.NaN(), Excess: math.NaN(),
					OfFirst: math.NaN(), PerHop: math.NaN()}
				if hasFirst && first.mean != 0 {
					row.OfFirst = st.mean / first.mean
				}
				if hasFirst && k > 1 {
					row.PerHop = (st.mean - first.mean) / float64(k-1)
				}
				if registry.Has(ht.Workload, workload.RoundTrip) {
					row.SegmentSum = segmentSum(per, k)
					row.Excess = row.Mean - row.SegmentSum
				}
				ht.Rows = append(ht.Rows, row)
			}
		}
	}
	return out
}

// hopMeans are one series' means and SDs in a chain test, by parameter
// (hops, segment), then its value.
type hopMeans map[string]map[int]hopStat

type hopStat struct{ mean, sd float64 }

// segmentSum adds segments 1..k's means: segment 1 is the one-hop case,
// segment i past it its own case. NaN when one is missing.
func segmentSum(per hopMeans, k int) float64 {
	sum := 0.0
	for i := 1; i <= k; i++ {
		st, ok := per[segmentParam][i]
		if i == 1 {
			st, ok = per[hopsParam][1]
		}
		if !ok {
			return math.NaN()
		}
		sum += st.mean
	}
	return sum
}
