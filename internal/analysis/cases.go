package analysis

import (
	"math"
	"slices"
	"time"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/cost"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// costMetrics follow every workload's own metrics, in this order.
var costMetrics = []workload.Metric{
	{Key: "client_cpu", Title: "Client CPU", Unit: "s", Short: "client CPU s"},
	{Key: "server_cpu", Title: "Server CPU", Unit: "s", Short: "server CPU s"},
	{Key: "cpu_per_gb", Title: "CPU per GB moved (client + server)", Unit: "s/GB", Short: "CPU s/GB"},
	{Key: "client_mem", Title: "Client peak memory (cgroup)", Unit: "MB", Short: "client MB"},
	{Key: "server_mem", Title: "Server peak memory (cgroup)", Unit: "MB", Short: "server MB"},
	{Key: "client_rss", Title: "Client peak RSS (plain process)", Unit: "MB", Short: "client RSS MB"},
	{Key: "server_rss", Title: "Server peak RSS (plain process)", Unit: "MB", Short: "server RSS MB"},
	{Key: "machine_cpu", Title: "Machine CPU, all cores", Unit: "% busy", Short: "machine CPU %"},
	{Key: "busiest_core", Title: "Machine CPU, busiest core", Unit: "% busy", Short: "busiest core %"},
	// What the cluster's node daemons spent during the cell, summed over
	// the nodes the lab's pods are on (record.Cell.Daemons): the pod
	// network's agent and kube-proxy, per cell and per unit of work like
	// the workload's own CPU per GB, and the kubelet.
	{Key: "cni_cpu", Title: "CNI agent CPU (node daemons)", Unit: "ms", Short: "agent CPU ms"},
	{Key: "cni_cpu_per_gb", Title: "CNI agent CPU per GB moved", Unit: "ms/GB", Short: "agent ms/GB"},
	{Key: "cni_us_per_trans", Title: "CNI agent CPU per transaction", Unit: "µs", Short: "agent µs/trans"},
	{Key: "cni_mem", Title: "CNI agent memory (working set)", Unit: "MB", Short: "agent MB"},
	{Key: "proxy_cpu", Title: "kube-proxy CPU", Unit: "ms", Short: "kube-proxy CPU ms"},
	{Key: "proxy_cpu_per_gb", Title: "kube-proxy CPU per GB moved", Unit: "ms/GB", Short: "kube-proxy ms/GB"},
	{Key: "proxy_us_per_trans", Title: "kube-proxy CPU per transaction", Unit: "µs", Short: "kube-proxy µs/trans"},
	{Key: "proxy_mem", Title: "kube-proxy memory (working set)", Unit: "MB", Short: "kube-proxy MB"},
	{Key: "kubelet_cpu", Title: "kubelet CPU", Unit: "ms", Short: "kubelet CPU ms"},
}

func init() {
	for _, k := range kernelMetrics {
		costMetrics = append(costMetrics, workload.Metric{Key: k.key, Title: k.title, Unit: k.unit, Short: k.short, Count: k.count})
	}
}

// daemonKeys are the metric key prefixes of the node daemons' roles.
var daemonKeys = []struct{ role, prefix string }{
	{record.DaemonCNIAgent, "cni"},
	{record.DaemonKubeProxy, "proxy"},
	{record.DaemonKubelet, "kubelet"},
}

// addDaemons adds a cell's node daemons' figures to its values: CPU in
// ms, in ms per GB of payload moved (as cpu_per_gb, in ms: a node daemon
// spends a thousandth of what the workload does), per transaction (from their
// share of a core over the cell and the cell's transaction rate, both
// rates over the same cell) and memory; the kubelet's CPU only.
func addDaemons(v map[string]float64, daemons map[string]record.DaemonCost, moved int64) {
	for _, d := range daemonKeys {
		c, ok := daemons[d.role]
		if !ok {
			continue
		}
		v[d.prefix+"_cpu"] = c.CPUSeconds * 1000
		if d.role == record.DaemonKubelet {
			continue
		}
		v[d.prefix+"_mem"] = float64(c.MemoryBytes) / 1e6
		if moved > 0 {
			v[d.prefix+"_cpu_per_gb"] = 1000 * c.CPUSeconds / (float64(moved) / 1e9)
		}
		if t := v["trans_per_s"]; t > 0 {
			v[d.prefix+"_us_per_trans"] = c.CPUPercent / 100 / t * 1e6
		}
	}
}

// caseMetrics are a workload's metrics in the order tables show them:
// its own, then the costs.
func caseMetrics(name string) []workload.Metric {
	w, ok := registry.Lookup(name)
	if !ok {
		return costMetrics
	}
	out := slices.Clip(w.Metrics())
	// A fan-out test's figures per client container (Bryzgalov's (2014) plots).
	for _, m := range w.Metrics() {
		if m.Key == w.Headline() {
			out = append(out, workload.Metric{Key: "per_client", Title: m.Title + " per client container", Unit: m.Unit,
				HigherIsBetter: m.HigherIsBetter, Short: m.Short + " per client"})
		}
	}
	out = append(out, workload.Metric{Key: "fairness", Title: "Fairness over client containers (Jain's index)", Unit: "1 = equal",
		HigherIsBetter: true, Short: "fairness"},
		workload.Metric{Key: "clients", Title: "Client containers", Unit: "count", Short: "clients"})
	return append(out, costMetrics...)
}

// Observation is one repetition of one case on one series: its figures,
// and the unit of the plan it ran with the lab instance it ran on.
type Observation struct {
	Series string
	Case   string
	Test   int
	Param  string
	Value  string
	Work   string // workload
	Proto  string // stream: tcp or udp; rr: tcp, udp or crr
	Cell   int
	// Unit is the cell's unit of the plan (its chunk; the repetition when
	// the cell is unknown), which pairs it with the reference's cell.
	Unit, Instance int
	Values         map[string]float64
	Moved          int64 // payload bytes the cell moved; 0: unknown
}

// Cell is what a run's record says of one of its cells: when it ran, its
// mode, which unit of the plan (a chunk of sizes, a repetition) and on
// which instance of its mode's lab, and for a finished cell of a sweep of
// sizes its requests per second (0 when unknown). Cells of the same chunk
// sent the same message sizes, whatever their mode.
type Cell struct {
	Start, End time.Time
	Mode       string
	Chunk      int
	Instance   int
	Rate       float64
	// Daemons is what the cluster's node daemons spent during the cell.
	Daemons map[string]record.DaemonCost
	// Kernel is where the machine's CPU went during the cell.
	Kernel *record.CellKernel
	// Conntrack is the lab's connection tracking during the cell.
	Conntrack *record.CellConntrack
}

// Observations turns one run's stored records into observations:
// one per cell that printed a total, with the cell's cost and the machine's
// CPU while it ran. series maps a record's mode to its series name. A
// fan-out cell (several clients at once, each its own total) becomes one
// observation: additive figures summed over its clients, the others
// averaged, with the headline per client container and Jain's fairness
// index over the containers.
func Observations(recs []record.Record, costs []record.Cost, cpu []cost.CPUSample, cells map[int]Cell, series func(mode string) string) []Observation {
	byCell := map[int]*cellTotals{}
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
		ct := byCell[r.Cell]
		if ct == nil {
			ct = &cellTotals{w: w, vals: map[string][]float64{}, perClient: map[string]float64{},
				obs: Observation{Series: series(r.Mode), Case: r.Case, Test: r.Test, Param: r.Param, Value: r.Value, Work: r.Workload,
					Proto: tot.Protocol, Cell: r.Cell, Unit: r.Rep}}
			if c, ok := cells[r.Cell]; ok {
				ct.obs.Unit, ct.obs.Instance = c.Chunk, c.Instance
			}
			byCell[r.Cell] = ct
			order = append(order, r.Cell)
		}
		ct.add(r, tot)
	}
	for _, c := range costs {
		ct := byCell[c.Cell]
		if ct == nil {
			continue
		}
		ct.cost = &c
	}
	out := make([]Observation, 0, len(order))
	for _, cell := range order {
		ct := byCell[cell]
		o := ct.observation()
		if w, ok := cells[cell]; ok {
			all, busiest := cpuOver(cpu, w)
			o.Values["machine_cpu"], o.Values["busiest_core"] = all, busiest
			if len(w.Daemons) > 0 {
				addDaemons(o.Values, w.Daemons, ct.moved)
			}
			if w.Kernel != nil {
				var perTrans func(float64) float64 // the time's share of the cell over the transaction rate
				if t, wall := o.Values["trans_per_s"], w.End.Sub(w.Start).Seconds(); t > 0 && wall > 0 {
					perTrans = func(s float64) float64 { return s / wall / t * 1e6 }
				}
				addKernel(o.Values, *w.Kernel, ct.moved, perTrans)
			}
			if c := w.Conntrack; c != nil {
				entries, bytes, drops := c.Sums()
				o.Values["ct_entries"], o.Values["ct_drops"] = float64(entries), float64(drops)
				if c.ObjectBytes > 0 {
					o.Values["ct_memory_kib"] = float64(bytes) / 1024
				}
			}
		}
		if c := ct.cost; c != nil {
			o.Values["client_cpu"] = c.Client.CPUSeconds
			o.Values["server_cpu"] = c.Server.CPUSeconds
			// A cgroup counts page cache and kernel memory, a process's RSS
			// neither: keep them apart so no change compares one with the other.
			o.Values[memKey("client", c.Client.Source)] = float64(c.Client.MemoryPeak) / 1e6
			o.Values[memKey("server", c.Server.Source)] = float64(c.Server.MemoryPeak) / 1e6
			if ct.moved > 0 {
				o.Values["cpu_per_gb"] = (c.Client.CPUSeconds + c.Server.CPUSeconds) / (float64(ct.moved) / 1e9)
			}
		}
		out = append(out, o)
	}
	return out
}

// cellTotals gathers one cell's totals: one, or one per client of a
// fan-out test.
type cellTotals struct {
	w         workload.Socket
	obs       Observation
	vals      map[string][]float64 // every total's values, by metric
	perClient map[string]float64   // the headline summed per client container
	clients   []string             // in the order they reported
	moved     int64
	cost      *record.Cost
}

func (ct *cellTotals) add(r record.Record, tot workload.Total) {
	for k, v := range tot.Values {
		ct.vals[k] = append(ct.vals[k], v)
	}
	ct.moved += tot.Moved
	if r.Client == "" {
		return
	}
	if _, seen := ct.perClient[r.Client]; !seen {
		ct.clients = append(ct.clients, r.Client)
	}
	ct.perClient[r.Client] += tot.Values[ct.w.Headline()]
}

// observation sums the additive figures and averages the others; a fan-out
// cell adds its per-container figures.
func (ct *cellTotals) observation() Observation {
	o := ct.obs
	o.Moved = ct.moved
	o.Values = make(map[string]float64, len(ct.vals)+8)
	additive := map[string]bool{}
	for _, m := range ct.w.Metrics() {
		additive[m.Key] = m.Additive
	}
	for k, xs := range ct.vals {
		if additive[k] {
			o.Values[k] = stats.Sum(xs)
		} else {
			o.Values[k] = stats.Mean(xs)
		}
	}
	if n := len(ct.clients); n > 0 {
		xs := make([]float64, n)
		for i, c := range ct.clients {
			xs[i] = ct.perClient[c]
		}
		o.Values["clients"] = float64(n)
		o.Values["per_client"] = stats.Mean(xs)
		o.Values["fairness"] = jain(xs)
	}
	return o
}

// jain is Jain's fairness index, (Σx)² / (n Σx²): 1 when every client got
// the same, 1/n when one got everything.
func jain(xs []float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return math.NaN()
	}
	return sum * sum / (float64(len(xs)) * sq)
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
func cpuOver(cpu []cost.CPUSample, w Cell) (all, busiest float64) {
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

// CaseStat is a metric's statistics over a series' repetitions, each
// with its change against the reference series (the 2017 Coherence thesis's tables).
type CaseStat struct {
	N                  int
	Min, Max, Mean, SD Change
}

// CaseRow is one series of a case.
type CaseRow struct {
	Series string
	N      int // repetitions
	Stats  map[string]CaseStat
}

// Case is one thing every series measured alike, compared across the
// series: a test with its swept value, measured over repetitions (Rows
// hold their statistics), or a sweep of message sizes (ping-pong, see
// Sweep.Case), whose own view is the Sweep. Intervals, Drivers and
// Instances read every case alike.
type Case struct {
	Label, Workload string
	Protocol        string // stream: tcp or udp; rr: tcp, udp or crr
	Test            int
	Param, Value    string
	Metrics         []workload.Metric // those some series has
	Rows            []CaseRow         // in series order; series without data left out

	units map[string]map[int]unitObs // series → unit → its repetition's figures
	Sweep *Sweep                     // the size-sweep view of a case that sweeps message size; nil for repetitions
}

// unitObs is a repetition's figures with its lab instance.
type unitObs struct {
	instance int
	values   map[string]float64
}

// Cases groups observations by case (in the order they first ran,
// by test and sweep value) and summarises each metric per series over the
// repetitions, comparing with ref's statistics ("" for none); same is the
// threshold in percent below which a change counts as "same".
func Cases(obs []Observation, series []string, ref string, same float64) []Case {
	return CasesWithin(obs, series, One(ref), same)
}

// RefOf says, for a series, the series it is compared with ("" none).
type RefOf func(series string) string

// One compares every series with ref.
func One(ref string) RefOf { return func(string) string { return ref } }

// Within compares each series with the one refs names for it, and a series
// refs does not name with nothing: a comparison of clusters (or of other
// variants) divides k8s-pod on a cluster by k8s-host on the same cluster.
func Within(refs map[string]string) RefOf { return func(s string) string { return refs[s] } }

// CasesWithin is Cases with each series compared with its own reference.
func CasesWithin(obs []Observation, series []string, refOf RefOf, same float64) []Case {
	var cases []*Case
	byLabel := map[string]*Case{}
	vals := map[string]map[string]map[string][]float64{} // case → series → metric → values
	for _, o := range obs {
		c := byLabel[o.Case]
		if c == nil {
			c = &Case{Label: o.Case, Workload: o.Work, Protocol: o.Proto, Test: o.Test, Param: o.Param, Value: o.Value}
			byLabel[o.Case] = c
			cases = append(cases, c)
			vals[o.Case] = map[string]map[string][]float64{}
			c.units = map[string]map[int]unitObs{}
		}
		if c.units[o.Series] == nil {
			c.units[o.Series] = map[int]unitObs{}
		}
		c.units[o.Series][o.Unit] = unitObs{instance: o.Instance, values: o.Values}
		if vals[o.Case][o.Series] == nil {
			vals[o.Case][o.Series] = map[string][]float64{}
		}
		for k, x := range o.Values {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				vals[o.Case][o.Series][k] = append(vals[o.Case][o.Series][k], x)
			}
		}
	}
	slices.SortStableFunc(cases, func(a, b *Case) int { return a.Test - b.Test })
	var out []Case
	for _, c := range cases {
		per := vals[c.Label]
		for _, m := range caseMetrics(c.Workload) {
			for _, s := range series {
				if len(per[s][m.Key]) > 0 {
					c.Metrics = append(c.Metrics, m)
					break
				}
			}
		}
		for _, s := range series {
			if per[s] == nil {
				continue
			}
			ref := refOf(s)
			_, hasRef := per[ref]
			row := CaseRow{Series: s, Stats: map[string]CaseStat{}}
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
					if m.Count {
						return countChange(v, ref, isRef, hr, higher, same)
					}
					return change(v, stats.Ratio(v, ref), isRef, hr, higher, same)
				}
				row.Stats[m.Key] = CaseStat{N: len(x),
					Min:  vs(stats.Min(x), stats.Min(r), hb),
					Max:  vs(stats.Max(x), stats.Max(r), hb),
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

// SummaryMetrics are the metrics a one-screen summary shows for a case:
// the workload's own figures, then CPU per GB and the busiest core, and
// the CNI agent's and kube-proxy's CPU per unit of work where recorded.
func (c Case) SummaryMetrics() []workload.Metric {
	var out []workload.Metric
	has := func(key string) bool {
		return slices.ContainsFunc(c.Metrics, func(m workload.Metric) bool { return m.Key == key })
	}
	for _, m := range c.Metrics {
		// A node daemon's CPU per unit of work, once: per transaction
		// where the case counts them, else per GB.
		if (m.Key == "cni_cpu_per_gb" && has("cni_us_per_trans")) || (m.Key == "proxy_cpu_per_gb" && has("proxy_us_per_trans")) ||
			(m.Key == "system_per_gb" && has("system_us_per_trans")) || (m.Key == "softirq_per_gb" && has("softirq_us_per_trans")) {
			continue
		}
		switch m.Key {
		case "client_cpu", "server_cpu", "client_mem", "server_mem", "client_rss", "server_rss", "machine_cpu", "out_of_order", "avg_offset", "rtt_p99", "packets_per_s", "clients",
			"cni_cpu", "cni_mem", "proxy_cpu", "proxy_mem", "kubelet_cpu",
			"user_s", "system_s", "softirq_s", "busiest_softirq", "net_rx", "net_tx":
			continue
		}
		out = append(out, m)
	}
	return out
}
