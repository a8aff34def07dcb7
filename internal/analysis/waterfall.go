package analysis

import (
	"maps"
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/workload"
)

// A waterfall steps through a run's series in their order, each against
// the one before it (spec.Spec.Waterfall): what each layer of a container
// network adds to the one below it, when the modes add one layer at a time.

// Waterfall is one case's figure stepped through the series in order.
type Waterfall struct {
	Case   string
	Metric workload.Metric
	Steps  []Step // the series that measured it, in order
}

// Step is one series against the one before it that measured the figure:
// its mean over the repetitions (Total) and what it added to From's
// (Total less From's Total), with the 95 % interval of that difference
// from the repetitions paired unit by unit, as a count's difference to
// the reference (DiffOf). The first step is the base: From "", Added NaN.
type Step struct {
	Series, From string
	Total        float64
	Added        DiffInterval
}

// stepped is a figure a waterfall steps: on a workload's cases, a metric
// and its value in a repetition's figures (NaN where it has none).
type stepped struct {
	workload string
	metric   workload.Metric
	of       func(values map[string]float64) float64
}

// steppedFigures are what a waterfall steps: rr's round trip, stream's CPU
// per GB moved (client and server, from the cost records) and where the
// machine's CPU went while it moved them (record.CellKernel).
var steppedFigures = []stepped{
	{"rr", workload.Metric{Key: "rtt_p50", Title: "Round trip, median", Unit: "µs", Short: "RTT p50 µs"}, valueOf("rtt_p50")},
	{"rr", workload.Metric{Key: "rtt_p99", Title: "Round trip, 99th pct", Unit: "µs", Short: "RTT p99 µs"}, valueOf("rtt_p99")},
	{"stream", workload.Metric{Key: "cpu_per_gb", Title: "CPU per GB moved (client + server)", Unit: "s/GB", Short: "CPU s/GB"}, valueOf("cpu_per_gb")},
	{"stream", workload.Metric{Key: "softirq_share", Title: "Softirq share of the busy CPU time, all cores", Unit: "%", Short: "softirq %"}, softirqShare},
}

func valueOf(key string) func(map[string]float64) float64 {
	return func(v map[string]float64) float64 {
		if x, ok := v[key]; ok {
			return x
		}
		return math.NaN()
	}
}

// softirqShare is the part of the machine's busy time (user, system and
// softirq, every core) that was softirq during the cell: how much of the
// work a layer moves into the kernel's packet processing, whatever the
// machine's other load made of the idle time.
func softirqShare(v map[string]float64) float64 {
	u, okU := v["user_s"]
	s, okS := v["system_s"]
	q, okQ := v["softirq_s"]
	if !okU || !okS || !okQ || !(u+s+q > 0) {
		return math.NaN()
	}
	return 100 * q / (u + s + q)
}

// Waterfalls steps every case measured over repetitions through the
// series in order, for each figure its workload has (steppedFigures); a
// series that did not measure a figure is passed over, so the next one
// steps from the last that did. Figures fewer than two series measured
// give none.
func Waterfalls(cases []Case, series []string) []Waterfall {
	var out []Waterfall
	for _, c := range cases {
		if c.Sweep != nil {
			continue
		}
		for _, fig := range steppedFigures {
			if fig.workload != c.Workload {
				continue
			}
			w := Waterfall{Case: c.Label, Metric: fig.metric}
			var prev Step
			for _, s := range series {
				st := Step{Series: s, From: prev.Series, Total: c.meanOf(s, fig.of), Added: DiffInterval{Diff: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}}
				if bad(st.Total) {
					continue
				}
				if prev.Series != "" {
					st.Added = DiffOf(c.pairedOf(s, prev.Series, fig.of)).Around(st.Total - prev.Total)
				}
				w.Steps = append(w.Steps, st)
				prev = st
			}
			if len(w.Steps) > 1 {
				out = append(out, w)
			}
		}
	}
	return out
}

// meanOf is the mean of of over the series' repetitions (those it gives a
// finite value), NaN when none; in the units' order, so the same run sums
// alike every time.
func (c Case) meanOf(series string, of func(map[string]float64) float64) float64 {
	units := c.units[series]
	var sum float64
	n := 0
	for _, k := range slices.Sorted(maps.Keys(units)) {
		if x := of(units[k].values); !bad(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
