package analysis

import (
	"maps"
	"math"
	"slices"
	"time"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/cost"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// SocketMetric is one figure of a socket test's repetition: a workload's
// own (its descriptor's Metrics) or what the cell cost.
type SocketMetric = workload.Metric

// costMetrics follow every workload's own metrics, in this order.
var costMetrics = []SocketMetric{
	{Key: "client_cpu", Title: "Client CPU", Unit: "s", Short: "client CPU s"},
	{Key: "server_cpu", Title: "Server CPU", Unit: "s", Short: "server CPU s"},
	{Key: "cpu_per_gb", Title: "CPU per GB moved (client + server)", Unit: "s/GB", Short: "CPU s/GB"},
	{Key: "client_mem", Title: "Client peak memory (cgroup)", Unit: "MB", Short: "client MB"},
	{Key: "server_mem", Title: "Server peak memory (cgroup)", Unit: "MB", Short: "server MB"},
	{Key: "client_rss", Title: "Client peak RSS (plain process)", Unit: "MB", Short: "client RSS MB"},
	{Key: "server_rss", Title: "Server peak RSS (plain process)", Unit: "MB", Short: "server RSS MB"},
	{Key: "machine_cpu", Title: "Machine CPU, all cores", Unit: "% busy", Short: "machine CPU %"},
	{Key: "busiest_core", Title: "Machine CPU, busiest core", Unit: "% busy", Short: "busiest core %"},
}

// socketMetrics are a workload's metrics in the order tables show them:
// its own, then the costs.
func socketMetrics(name string) []SocketMetric {
	w, ok := registry.Lookup(name)
	if !ok {
		return costMetrics
	}
	return append(slices.Clip(w.Metrics()), costMetrics...)
}

// SocketObs is one repetition of one case on one series: its figures.
type SocketObs struct {
	Series string
	Case   string
	Test   int
	Param  string
	Value  string
	Work   string // workload
	Proto  string // stream: tcp or udp; rr: tcp, udp or crr
	Rep    int
	Cell   int
	Values map[string]float64
}

// Window is when a cell ran.
type Window struct{ Start, End time.Time }

// SocketObservations turns one run's stored records into observations:
// one per cell that printed a total, with the cell's cost and the machine's
// CPU while it ran. series maps a record's mode to its series name.
func SocketObservations(recs []record.Record, costs []record.Cost, cpu []cost.CPUSample, cells map[int]Window, series func(mode string) string) []SocketObs {
	byCell := map[int]*SocketObs{}
	var order []int
	for _, r := range recs {
		if r.Kind != record.KindTotal {
			continue
		}
		w, ok := registry.Lookup(r.Workload)
		if !ok {
			continue // a workload this cnperf does not know
		}
		tot, err := w.Total(r.Data)
		if err != nil {
			continue
		}
		v := maps.Clone(tot.Values)
		if v == nil {
			v = map[string]float64{}
		}
		o := &SocketObs{Series: series(r.Mode), Case: r.Case, Test: r.Test, Param: r.Param, Value: r.Value, Work: r.Workload,
			Proto: tot.Protocol, Rep: r.Rep, Cell: r.Cell, Values: v}
		if _, dup := byCell[r.Cell]; !dup {
			order = append(order, r.Cell)
		}
		byCell[r.Cell] = o
		if w, ok := cells[r.Cell]; ok {
			all, busiest := cpuOver(cpu, w)
			o.Values["machine_cpu"], o.Values["busiest_core"] = all, busiest
		}
		if tot.Moved > 0 {
			o.Values["_bytes"] = float64(tot.Moved)
		}
	}
	for _, c := range costs {
		o := byCell[c.Cell]
		if o == nil {
			continue
		}
		o.Values["client_cpu"] = c.Client.CPUSeconds
		o.Values["server_cpu"] = c.Server.CPUSeconds
		// A cgroup counts page cache and kernel memory, a process's RSS
		// neither: keep them apart so no change compares one with the other.
		o.Values[memKey("client", c.Client.Source)] = float64(c.Client.MemoryPeak) / 1e6
		o.Values[memKey("server", c.Server.Source)] = float64(c.Server.MemoryPeak) / 1e6
		if b := o.Values["_bytes"]; b > 0 {
			o.Values["cpu_per_gb"] = (c.Client.CPUSeconds + c.Server.CPUSeconds) / (b / 1e9)
		}
	}
	out := make([]SocketObs, 0, len(order))
	for _, cell := range order {
		o := byCell[cell]
		delete(o.Values, "_bytes")
		out = append(out, *o)
	}
	return out
}

func memKey(role, source string) string {
	if source == "cgroup" {
		return role + "_mem"
	}
	return role + "_rss"
}

// cpuOver averages the machine's per-second CPU samples that ended inside w
// (the first second after the start is the cell's too): all cores, and the
// busiest core of each second.
func cpuOver(cpu []cost.CPUSample, w Window) (all, busiest float64) {
	var a, b []float64
	for _, c := range cpu {
		if c.Time.After(w.Start) && !c.Time.After(w.End.Add(500*time.Millisecond)) {
			a = append(a, c.All)
			if len(c.Cores) > 0 {
				b = append(b, slices.Max(c.Cores))
			}
		}
	}
	return stats.Mean(a), stats.Mean(b)
}

// SocketStat is a metric's statistics over a series' repetitions, each
// with its change against the reference series (seed 000's tables).
type SocketStat struct {
	N                  int
	Min, Max, Mean, SD Change
}

// SocketRow is one series of a case.
type SocketRow struct {
	Series string
	N      int // repetitions
	Stats  map[string]SocketStat
}

// SocketCase is one case (a test with its swept value) over the series.
type SocketCase struct {
	Label, Workload string
	Protocol        string // stream: tcp or udp; rr: tcp, udp or crr
	Test            int
	Param, Value    string
	Metrics         []SocketMetric // those some series has
	Rows            []SocketRow    // in series order; series without data left out
}

// SocketCases groups observations by case (in the order they first ran,
// by test and sweep value) and summarises each metric per series over the
// repetitions, comparing with ref's statistics ("" for none); same is the
// threshold in percent below which a change counts as "same".
func SocketCases(obs []SocketObs, series []string, ref string, same float64) []SocketCase {
	var cases []*SocketCase
	byLabel := map[string]*SocketCase{}
	vals := map[string]map[string]map[string][]float64{} // case → series → metric → values
	for _, o := range obs {
		c := byLabel[o.Case]
		if c == nil {
			c = &SocketCase{Label: o.Case, Workload: o.Work, Protocol: o.Proto, Test: o.Test, Param: o.Param, Value: o.Value}
			byLabel[o.Case] = c
			cases = append(cases, c)
			vals[o.Case] = map[string]map[string][]float64{}
		}
		if vals[o.Case][o.Series] == nil {
			vals[o.Case][o.Series] = map[string][]float64{}
		}
		for k, x := range o.Values {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				vals[o.Case][o.Series][k] = append(vals[o.Case][o.Series][k], x)
			}
		}
	}
	slices.SortStableFunc(cases, func(a, b *SocketCase) int { return a.Test - b.Test })
	var out []SocketCase
	for _, c := range cases {
		per := vals[c.Label]
		for _, m := range socketMetrics(c.Workload) {
			for _, s := range series {
				if len(per[s][m.Key]) > 0 {
					c.Metrics = append(c.Metrics, m)
					break
				}
			}
		}
		_, hasRef := per[ref]
		for _, s := range series {
			if per[s] == nil {
				continue
			}
			row := SocketRow{Series: s, Stats: map[string]SocketStat{}}
			isRef := hasRef && s == ref
			for _, m := range c.Metrics {
				x, r := per[s][m.Key], per[ref][m.Key]
				row.N = max(row.N, len(x))
				hr := hasRef && len(r) > 0
				hb := m.HigherIsBetter
				// Dividing pooled statistics is like with like here: every
				// series ran this very case (same workload, parameters and
				// swept value), so its repetitions differ only by the mode.
				vs := func(v, ref float64, higher bool) Change {
					return change(v, stats.Ratio(v, ref), isRef, hr, higher, same)
				}
				row.Stats[m.Key] = SocketStat{N: len(x),
					Min:  vs(minOf(x), minOf(r), hb),
					Max:  vs(maxOf(x), maxOf(r), hb),
					Mean: vs(stats.Mean(x), stats.Mean(r), hb),
					SD:   vs(stats.StdDev(x), stats.StdDev(r), false),
				}
			}
			c.Rows = append(c.Rows, row)
		}
		out = append(out, *c)
	}
	return out
}

func minOf(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return slices.Min(x)
}

func maxOf(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return slices.Max(x)
}

// SummaryMetrics are the metrics a one-screen summary shows for a case:
// the workload's own figures, then CPU per GB and the busiest core.
func (c SocketCase) SummaryMetrics() []SocketMetric {
	var out []SocketMetric
	for _, m := range c.Metrics {
		switch m.Key {
		case "client_cpu", "server_cpu", "client_mem", "server_mem", "client_rss", "server_rss", "machine_cpu", "out_of_order", "avg_offset", "rtt_p99", "packets_per_s":
			continue
		}
		out = append(out, m)
	}
	return out
}
