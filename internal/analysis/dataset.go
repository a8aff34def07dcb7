package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cnperf/cnperf/internal/record"
)

// Metric is a per-sample quantity of the ping-pong workload.
type Metric struct {
	Key, Title, Unit string // e.g. "transfer", "Transfer rate", "MB/s"
	HigherIsBetter   bool
	// Value is defined on successful samples (s.OK() && s.DurationMS > 0).
	// A NaN or infinite value leaves the sample out of that metric.
	Value func(record.Sample) float64
}

// PingPongMetrics returns the ping-pong metrics in report order: transfer
// rate, latency (ping→pong), requests per second (ppbench's per-request
// definition, 1000/DurationMS) and siege latency (siege→ping→siege).
//
// Dataset caches sorted values by Metric.Key: a Metric of one's own must
// not reuse one of these keys for a different Value.
func PingPongMetrics() []Metric {
	return []Metric{
		{Key: "transfer", Title: "Transfer rate", Unit: "MB/s", HigherIsBetter: true,
			Value: func(s record.Sample) float64 { return float64(s.Length) * 1000 / s.DurationMS / 1e6 }},
		{Key: "latency", Title: "Latency", Unit: "ms", HigherIsBetter: false,
			Value: func(s record.Sample) float64 { return s.DurationMS }},
		{Key: "rps", Title: "Requests per second", Unit: "req/s", HigherIsBetter: true,
			Value: func(s record.Sample) float64 { return 1000 / s.DurationMS }},
		{Key: "outer", Title: "Siege latency", Unit: "ms", HigherIsBetter: false,
			// 0 is "not measured" (imported ppbench or ab data), not 0 ms.
			Value: func(s record.Sample) float64 {
				if s.LatencyMS <= 0 {
					return math.NaN()
				}
				return s.LatencyMS
			}},
	}
}

// MetricByKey returns the ping-pong metric with that key.
func MetricByKey(key string) (Metric, bool) {
	for _, m := range PingPongMetrics() {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

// SeriesSep joins mode and run in a series name when several runs are
// compared: "bridge · run2".
const SeriesSep = " · "

// SplitSeries splits a series name "mode · run" into its mode and run; a
// name without SeriesSep is a mode with run "".
func SplitSeries(name string) (mode, run string) {
	mode, run, _ = strings.Cut(name, SeriesSep)
	return mode, run
}

// Dataset is one or more runs' samples, grouped by series.
type Dataset struct {
	Series    []string                   // series names in order (modes, or "mode · run" when several runs)
	Reference string                     // a series name, "" if none
	OK        map[string][]record.Sample // successful samples per series
	Failed    map[string]int
	// FailedSizes lists, per series, the sizes (ascending) whose every
	// sample failed: they are missing from the series' curves and ratios.
	FailedSizes map[string][]int
	MaxSize     int // largest size of a successful sample

	cache *pointCache // sorted metric values and size groups, shared by copies; nil in a literal Dataset
}

// NewDataset keeps the samples of the named series, splitting them into
// successful ones (s.OK() && s.DurationMS > 0) and a count of failed ones.
// An empty series list means every key of samples, sorted; duplicate names
// are dropped. The second value lists what was left out and why: samples of
// a series not in the list, series without successful samples, and a
// reference without successful samples (Reference is then "").
func NewDataset(series []string, samples map[string][]record.Sample, reference string) (Dataset, []string) {
	var warns []string
	if len(series) == 0 {
		series = slices.Sorted(maps.Keys(samples))
	}
	d := Dataset{OK: map[string][]record.Sample{}, Failed: map[string]int{}, FailedSizes: map[string][]int{}, cache: &pointCache{m: map[pointKey][]point{}, groups: map[int]Grouping{}}}
	seen := map[string]bool{}
	for _, s := range series {
		if seen[s] {
			continue
		}
		seen[s] = true
		d.Series = append(d.Series, s)
		var ok []record.Sample
		var failedAt map[int]bool // sizes with a failed sample: true while none succeeded
		for _, smp := range samples[s] {
			if smp.OK() && smp.DurationMS > 0 {
				ok = append(ok, smp)
				d.MaxSize = max(d.MaxSize, smp.Size)
			} else {
				d.Failed[s]++
				if failedAt == nil {
					failedAt = map[int]bool{}
				}
				failedAt[smp.Size] = true
			}
		}
		if failedAt != nil {
			for _, smp := range ok {
				if _, seen := failedAt[smp.Size]; seen {
					failedAt[smp.Size] = false
				}
			}
			var sizes []int
			for size, none := range failedAt {
				if none {
					sizes = append(sizes, size)
				}
			}
			if len(sizes) > 0 {
				slices.Sort(sizes)
				d.FailedSizes[s] = sizes
			}
		}
		d.OK[s] = ok
		if len(ok) == 0 && s != reference {
			warns = append(warns, fmt.Sprintf("series %q has no successful samples", s))
		}
	}
	var extra []string
	for k, v := range samples {
		if !seen[k] && len(v) > 0 {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		warns = append(warns, fmt.Sprintf("samples of %q are not in the series list: left out", k))
	}
	switch {
	case reference == "":
	case !seen[reference]:
		warns = append(warns, fmt.Sprintf("reference %q is not among the series: ratios are left out", reference))
	case len(samples[reference]) == 0:
		warns = append(warns, fmt.Sprintf("reference %q has no samples: ratios are left out", reference))
	case len(d.OK[reference]) == 0:
		warns = append(warns, fmt.Sprintf("reference %q has no successful samples: ratios are left out", reference))
	default:
		d.Reference = reference
	}
	return d, warns
}

// point is one sample's size and metric value.
type point struct {
	size  int
	value float64
}

type pointKey struct{ series, metric string }

type pointCache struct {
	mu     sync.Mutex
	m      map[pointKey][]point
	groups map[int]Grouping // by the number of groups asked for
}

// points returns the series' defined metric values with their sizes, sorted
// by value (ties by size). It sorts once per (series, Metric.Key) and shares
// the result; callers must not modify it.
func (d Dataset) points(series string, m Metric) []point {
	k := pointKey{series, m.Key}
	if d.cache != nil && m.Key != "" {
		d.cache.mu.Lock()
		p, ok := d.cache.m[k]
		d.cache.mu.Unlock()
		if ok {
			return p
		}
	}
	ok := d.OK[series]
	p := make([]point, 0, len(ok))
	for _, s := range ok {
		v := m.Value(s)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		p = append(p, point{s.Size, v})
	}
	slices.SortFunc(p, func(a, b point) int { return cmp.Or(cmp.Compare(a.value, b.value), a.size-b.size) })
	if d.cache != nil && m.Key != "" {
		d.cache.mu.Lock()
		d.cache.m[k] = p
		d.cache.mu.Unlock()
	}
	return p
}

// values returns the sorted metric values of the series.
func (d Dataset) values(series string, m Metric) []float64 {
	p := d.points(series, m)
	v := make([]float64, len(p))
	for i, x := range p {
		v[i] = x.value
	}
	return v
}
