package analysis

import (
	"math"
	"strings"

	"github.com/cnperf/cnperf/internal/workload"
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
	Case           string // the case's label; "" for a sweep of message sizes
	Mode           string // without driver
	Base, Other    string // drivers
	Metric         string // metric key
	Title, Unit    string // for tables: "Transfer rate, median", "MB/s"
	Short          string // column head in the terminal: "transfer MB/s"
	HigherIsBetter bool
	BaseValue      float64 // NaN when not measured
	OtherValue     float64
	// Ratio is other over base as the case's tables show it (Case.ratio):
	// for a sweep over like message sizes, else OtherValue / BaseValue;
	// NaN when either value is missing.
	Ratio float64
}

// Drivers compares each pair's two keys on every case's headline metrics
// (Case.headlines): the values are
// what the case's tables show (Case.value) and the ratio is the one they
// show (Case.ratio), for a sweep over like message sizes since a key whose
// cells failed measured other sizes. A metric neither side measured
// (siege latency of imported data) is left out. The cases' series must be
// the run's mode keys.
func Drivers(cases []Case, pairs []DriverPair) []DriverRow {
	var out []DriverRow
	for _, c := range cases {
		for _, p := range pairs {
			for _, m := range c.headlines() {
				add(&out, DriverRow{Case: c.Label, Mode: p.Mode, Base: p.Base, Other: p.Other, Metric: m.Key, Title: m.Title, Unit: m.Unit,
					Short: m.Short, HigherIsBetter: m.HigherIsBetter, BaseValue: c.value(p.BaseKey, m.Key), OtherValue: c.value(p.OtherKey, m.Key)},
					c.ratio(p.OtherKey, p.BaseKey, m.Key))
			}
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
func (c Case) Headline() (workload.Metric, bool) {
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
		return workload.Metric{}, false
	}
	return ms[0], true
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
