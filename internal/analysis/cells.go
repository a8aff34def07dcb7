package analysis

import (
	"math"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// What a run's cells recorded beside their workload's lines, read alike
// for every workload: where the machine's CPU went (kernel time) and what
// TCP_INFO said of the connections.

// kernelMetrics are where the machine's CPU went during a socket test's
// cell (record.Cell.Kernel): the kernel's time beside the processes' own,
// per cell and per unit of work, like CPU per GB. They sum every core of
// the machine, so they hold the clients', the servers' and the kernel's
// packet work of the one lab that ran then.
var kernelMetrics = []struct {
	key, title, unit, short string
	count                   bool
}{
	{"user_s", "User time, all cores (kernel's count)", "s", "user s", false},
	{"system_s", "System time, all cores", "s", "system s", false},
	{"softirq_s", "Softirq time, all cores", "s", "softirq s", false},
	{"system_per_gb", "System time per GB moved", "s/GB", "system s/GB", false},
	{"softirq_per_gb", "Softirq time per GB moved", "s/GB", "softirq s/GB", false},
	{"system_us_per_trans", "System time per transaction", "µs", "system µs/trans", false},
	{"softirq_us_per_trans", "Softirq time per transaction", "µs", "softirq µs/trans", false},
	{"busiest_softirq", "Softirq share of the busiest core", "% of the core", "busiest softirq %", false},
	{"net_rx", "NET_RX softirqs", "count", "NET_RX", true},
	{"net_tx", "NET_TX softirqs", "count", "NET_TX", true},
}

// addKernel adds a cell's kernel time to its values: seconds summed over
// the cores, per GB of payload moved (the same over the pinned cores
// where a cores condition pinned them), per transaction where the cell
// counted them (perTrans turns seconds into µs per transaction as the
// workload counts them; nil where it does not), the busiest core's
// softirq share and the network softirqs' counts. Socket tests' cases and
// the per-series table (KernelRows) read the same values.
func addKernel(v map[string]float64, k record.CellKernel, moved int64, perTrans func(seconds float64) float64) {
	v["user_s"], v["system_s"], v["softirq_s"] = k.UserSeconds, k.SystemSeconds, k.SoftirqSeconds
	v["busiest_softirq"] = k.BusiestSoftirqPercent
	v["net_rx"], v["net_tx"] = float64(k.NetRX), float64(k.NetTX)
	if moved > 0 {
		gb := float64(moved) / 1e9
		v["user_per_gb"], v["system_per_gb"], v["softirq_per_gb"] = k.UserSeconds/gb, k.SystemSeconds/gb, k.SoftirqSeconds/gb
		if p := k.Pinned; p != nil {
			v["pinned_system_per_gb"], v["pinned_softirq_per_gb"] = p.SystemSeconds/gb, p.SoftirqSeconds/gb
		}
	}
	if perTrans != nil {
		v["system_us_per_trans"], v["softirq_us_per_trans"] = perTrans(k.SystemSeconds), perTrans(k.SoftirqSeconds)
	}
}

// MeanCI is a mean over cells with its 95 % interval (Student's t over the
// cells' spread); Lo and Hi are NaN with fewer than two cells.
type MeanCI struct {
	Mean, Lo, Hi float64
	N            int
}

// MeanInterval is xs' mean with its 95 % interval, leaving out values that
// are not finite.
func MeanInterval(xs []float64) MeanCI {
	var ok []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			ok = append(ok, x)
		}
	}
	m := MeanCI{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: len(ok)}
	if len(ok) == 0 {
		return m
	}
	m.Mean = stats.Mean(ok)
	if len(ok) < 2 {
		return m
	}
	half := t975(float64(len(ok)-1)) * stats.StdDev(ok) / math.Sqrt(float64(len(ok)))
	m.Lo, m.Hi = m.Mean-half, m.Mean+half
	return m
}

// nonNegative is the interval of a quantity that cannot be negative (a
// time, a count): a lower bound below 0 (few cells, wide spread) is 0.
func nonNegative(xs []float64) MeanCI {
	m := MeanInterval(xs)
	if m.Lo < 0 {
		m.Lo = 0
	}
	return m
}

// KernelRow is one series' kernel time over its cells: per GB moved
// (cells that moved none left out), per transaction (where counted), the
// busiest core's softirq share and the network softirqs per cell; the
// same per GB over the pinned cores when a cores condition pinned the
// lab's hosts.
type KernelRow struct {
	Series                                string
	Cells                                 int
	UserPerGB, SystemPerGB, SoftirqPerGB  MeanCI
	SystemUSPerTrans, SoftirqUSPerTrans   MeanCI
	BusiestSoftirq                        MeanCI
	NetRX, NetTX                          MeanCI
	PinnedCores                           []int
	PinnedSystemPerGB, PinnedSoftirqPerGB MeanCI
}

// KernelRows are a run's kernel time per series over the cells that
// recorded it (record.Cell.Kernel), in the run's series order; per
// transaction for ping-pong, whose every sample is one request; nil when
// no cell recorded any (runs before it was recorded, labs on other
// machines).
func KernelRows(m record.Meta) []KernelRow {
	type vals struct {
		n      int
		v      map[string][]float64
		pinned []int
	}
	by := map[string]*vals{}
	for _, c := range m.Cells {
		if c.Kernel == nil || !c.Kernel.Sane() {
			continue
		}
		v := by[c.Mode]
		if v == nil {
			v = &vals{v: map[string][]float64{}}
			by[c.Mode] = v
		}
		v.n++
		var perRequest func(float64) float64 // ping-pong: every sample is one request
		if requests := float64(c.Samples); !m.Spec.Socket() && requests > 0 {
			perRequest = func(s float64) float64 { return 1e6 * s / requests }
		}
		cell := map[string]float64{}
		addKernel(cell, *c.Kernel, c.Kernel.Bytes, perRequest)
		for key, x := range cell {
			v.v[key] = append(v.v[key], x)
		}
		if _, ok := cell["pinned_system_per_gb"]; ok {
			v.pinned = c.Kernel.Pinned.Cores
		}
	}
	var out []KernelRow
	for _, s := range m.SeriesKeys() {
		v := by[s]
		if v == nil {
			continue
		}
		ci := func(key string) MeanCI { return nonNegative(v.v[key]) }
		out = append(out, KernelRow{Series: s, Cells: v.n,
			UserPerGB: ci("user_per_gb"), SystemPerGB: ci("system_per_gb"), SoftirqPerGB: ci("softirq_per_gb"),
			SystemUSPerTrans: ci("system_us_per_trans"), SoftirqUSPerTrans: ci("softirq_us_per_trans"),
			BusiestSoftirq: ci("busiest_softirq"), NetRX: ci("net_rx"), NetTX: ci("net_tx"),
			PinnedCores: v.pinned, PinnedSystemPerGB: ci("pinned_system_per_gb"), PinnedSoftirqPerGB: ci("pinned_softirq_per_gb")})
	}
	return out
}

// TCPRow is one series' TCP_INFO of its cells' connections (a side's,
// for the servers'), over the cells that recorded it: retransmits summed,
// the smoothed RTT and the window as means over the connections.
type TCPRow struct {
	Mode        string
	Side        string // the servers' side (ServerSides); "" for the clients'
	Cells       int
	Connections int64
	Retransmits int64
	RTTUS       float64
	Cwnd        float64
}

// ServerSides are the sides of the servers' connections a cell may
// record (record.Cell.ServerTCP), in the order tables show them: ping's
// answers to siege, ping's requests to pong, pong's bodies to ping.
var ServerSides = []string{"ping", "ping_to_pong", "pong"}

// TCPRows sum a run's cells' TCP_INFO per series, in the run's series
// order: the clients' connections (record.Cell.TCP), and the servers' per
// side (record.Cell.ServerTCP, in ServerSides' order); none where no cell
// recorded any (runs made before it was recorded).
func TCPRows(m record.Meta) (clients, servers []TCPRow) {
	of := func(c record.Cell, side string) *tcpinfo.Stats {
		if side == "" {
			return c.TCP
		}
		return c.ServerTCP[side]
	}
	return sumTCP(m, []string{""}, of), sumTCP(m, ServerSides, of)
}

// sumTCP sums, per series and side, what of returns for each cell.
func sumTCP(m record.Meta, sides []string, of func(record.Cell, string) *tcpinfo.Stats) []TCPRow {
	type key struct{ mode, side string }
	by := map[key]*TCPRow{}
	for _, c := range m.Cells {
		for _, side := range sides {
			t := of(c, side)
			if t == nil || t.Connections <= 0 {
				continue
			}
			k := key{c.Mode, side}
			r := by[k]
			if r == nil {
				r = &TCPRow{Mode: c.Mode, Side: side}
				by[k] = r
			}
			n := float64(t.Connections)
			r.Cells++
			r.Connections += t.Connections
			r.Retransmits += t.Retransmits
			r.RTTUS += t.RTTUS * n // weighted; divided below
			r.Cwnd += t.Cwnd * n
		}
	}
	var rows []TCPRow
	for _, k := range m.SeriesKeys() {
		for _, side := range sides {
			if r := by[key{k, side}]; r != nil {
				r.RTTUS /= float64(r.Connections)
				r.Cwnd /= float64(r.Connections)
				rows = append(rows, *r)
			}
		}
	}
	return rows
}
