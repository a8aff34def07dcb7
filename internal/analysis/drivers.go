package analysis

import (
	"math"
	"strings"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// DriverPair is one mode measured on the run's first driver and on another:
// the same network built by hand in namespaces and by a real engine.
type DriverPair struct {
	Mode              string // the mode without driver: "bridge"
	Base, Other       string // drivers: "netns", "docker"
	BaseKey, OtherKey string // mode keys: "bridge", "bridge@docker"
}

// DriverPairs pairs every key on a driver other than the first with the
// same mode's key on the first driver, in the order of keys. The first
// driver is the one plain keys (no "@") are on, as split reports it
// (spec.Spec.SplitModeKey). A mode on one driver only (bare, which runs
// once) has no pair; a run on a single driver has none at all.
func DriverPairs(keys []string, split func(key string) (mode, driver string)) []DriverPair {
	base := ""
	byMode := map[string]string{} // mode → its key on the first driver
	for _, k := range keys {
		if !strings.Contains(k, "@") {
			m, d := split(k)
			base = d
			byMode[m] = k
		}
	}
	var pairs []DriverPair
	for _, k := range keys {
		m, d := split(k)
		if d == base {
			continue
		}
		if bk, ok := byMode[m]; ok {
			pairs = append(pairs, DriverPair{Mode: m, Base: base, Other: d, BaseKey: bk, OtherKey: k})
		}
	}
	return pairs
}

// DriverRow is one metric of one mode on two drivers.
type DriverRow struct {
	Case           string // socket test case; "" for ping-pong
	Mode           string // without driver
	Base, Other    string // drivers
	Metric         string // metric key
	Title, Unit    string // for tables: "Transfer rate, median", "MB/s"
	Short          string // column head in the terminal: "transfer MB/s"
	HigherIsBetter bool
	BaseValue      float64 // NaN when not measured
	OtherValue     float64
	// Ratio is other over base: for ping-pong over like message sizes
	// (PingPongSet.Ratio), for a socket case OtherValue / BaseValue; NaN
	// when either value is missing.
	Ratio float64
}

// pingPongHeadline is the summary table's columns (WriteTable): ping-pong's
// metrics as its descriptor names them, the values read from ModeRow so
// both tables show the very same numbers.
type pingPongHeadline struct {
	key, title, unit, short string
	higher                  bool
	value                   func(ModeRow) float64
}

func pingPongHeadlines() []pingPongHeadline {
	values := map[string]func(ModeRow) float64{
		"transfer": func(r ModeRow) float64 { return r.TransferMBs },
		"latency":  func(r ModeRow) float64 { return r.InnerMS },
		"outer":    func(r ModeRow) float64 { return r.LatencyMS },
		"cell_rps": func(r ModeRow) float64 { return r.RPS },
	}
	var out []pingPongHeadline
	for _, m := range registry.PingPong().Metrics() {
		if v, ok := values[m.Key]; ok {
			out = append(out, pingPongHeadline{m.Key, m.Title, m.Unit, m.Short, m.HigherIsBetter, v})
		}
	}
	return out
}

// PingPongDrivers compares each pair's two keys on the summary's headline
// metrics: the values are the keys' summary rows (PingPongSet.Row), the
// ratio compares like message sizes (PingPongSet.Ratio), as the summary's
// ratios do, since a key whose cells failed measured other sizes. A metric
// neither side measured (siege latency of imported data) is left out.
func PingPongDrivers(p PingPongSet, pairs []DriverPair) []DriverRow {
	var out []DriverRow
	for _, pr := range pairs {
		base, other := p.Row(pr.BaseKey), p.Row(pr.OtherKey)
		for _, h := range pingPongHeadlines() {
			value := func(r ModeRow) float64 {
				if r.Samples == 0 {
					return math.NaN() // not measured: a median of nothing, or 0 cells
				}
				return h.value(r)
			}
			row := DriverRow{Mode: pr.Mode, Base: pr.Base, Other: pr.Other, Metric: h.key, Title: h.title, Unit: h.unit, Short: h.short,
				HigherIsBetter: h.higher, BaseValue: value(base), OtherValue: value(other)}
			add(&out, row, p.Ratio(pr.OtherKey, pr.BaseKey, h.key))
		}
	}
	return out
}

// add appends row with its ratio unless neither side has a value: a row of
// dashes only says the metric does not apply. A ratio needs both values.
func add(rows *[]DriverRow, row DriverRow, ratio float64) {
	if math.IsNaN(row.BaseValue) && math.IsNaN(row.OtherValue) {
		return
	}
	row.Ratio = math.NaN()
	if !math.IsNaN(row.BaseValue) && !math.IsNaN(row.OtherValue) {
		row.Ratio = ratio
	}
	*rows = append(*rows, row)
}

// Headline is the metric a case is judged by: the workload's own figure
// (throughput, transactions, jitter, datagram rate), else the first of its
// summary metrics; false when the case has none.
func (c SocketCase) Headline() (SocketMetric, bool) {
	var want string
	if w, ok := registry.Lookup(c.Workload); ok {
		want = w.Headline()
	}
	ms := c.SummaryMetrics()
	for _, m := range ms {
		if m.Key == want {
			return m, true
		}
	}
	if len(ms) == 0 {
		return SocketMetric{}, false
	}
	return ms[0], true
}

// SocketDrivers compares, per case, the mean over repetitions of the
// case's headline metric between each pair's two keys, as SocketCases
// computed it (its series must be the run's mode keys).
func SocketDrivers(cases []SocketCase, pairs []DriverPair) []DriverRow {
	var out []DriverRow
	for _, c := range cases {
		m, ok := c.Headline()
		if !ok {
			continue
		}
		mean := func(key string) float64 {
			for _, r := range c.Rows {
				if r.Series == key {
					if st, ok := r.Stats[m.Key]; ok && st.N > 0 {
						return st.Mean.Value
					}
				}
			}
			return math.NaN()
		}
		for _, p := range pairs {
			base, other := mean(p.BaseKey), mean(p.OtherKey)
			// Both keys ran this very case: dividing their means is like
			// with like, unlike ping-pong's pooled sizes.
			add(&out, DriverRow{Case: c.Label, Mode: p.Mode, Base: p.Base, Other: p.Other, Metric: m.Key, Title: m.Title, Unit: m.Unit,
				Short: m.Short, HigherIsBetter: m.HigherIsBetter, BaseValue: base, OtherValue: other}, stats.Ratio(other, base))
		}
	}
	return out
}

// GroupByDrivers splits rows by their pair of drivers, in first-seen
// order: each pair gets its own table, since its columns name the drivers.
func GroupByDrivers(rows []DriverRow) [][]DriverRow {
	var groups [][]DriverRow
	index := map[[2]string]int{}
	for _, r := range rows {
		k := [2]string{r.Base, r.Other}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	return groups
}
