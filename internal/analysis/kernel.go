package analysis

import (
	"math"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
)

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
// the cores, per GB of payload moved, per transaction where the case
// counts them (the time's share of the cell over the transaction rate,
// both over the same cell), the busiest core's softirq share and the
// network softirqs' counts.
func addKernel(v map[string]float64, k *record.CellKernel, moved int64, wall float64) {
	v["user_s"], v["system_s"], v["softirq_s"] = k.UserSeconds, k.SystemSeconds, k.SoftirqSeconds
	v["busiest_softirq"] = k.BusiestSoftirqPercent
	v["net_rx"], v["net_tx"] = float64(k.NetRX), float64(k.NetTX)
	if moved > 0 {
		gb := float64(moved) / 1e9
		v["system_per_gb"], v["softirq_per_gb"] = k.SystemSeconds/gb, k.SoftirqSeconds/gb
	}
	if t := v["trans_per_s"]; t > 0 && wall > 0 {
		v["system_us_per_trans"] = k.SystemSeconds / wall / t * 1e6
		v["softirq_us_per_trans"] = k.SoftirqSeconds / wall / t * 1e6
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

// KernelCell is one cell's kernel time with its series and the
// transactions it counted (ping-pong's requests; 0 where the cell's
// record does not say).
type KernelCell struct {
	Series       string
	Kernel       record.CellKernel
	Transactions float64
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

// KernelRows gathers the cells per series, in series' order; series with
// no cell left out.
func KernelRows(cells []KernelCell, series []string) []KernelRow {
	type vals struct {
		n                                          int
		user, sys, soft, sysT, softT, busy, rx, tx []float64
		pinned                                     []int
		pSys, pSoft                                []float64
	}
	by := map[string]*vals{}
	for _, c := range cells {
		v := by[c.Series]
		if v == nil {
			v = &vals{}
			by[c.Series] = v
		}
		k := c.Kernel
		v.n++
		v.busy = append(v.busy, k.BusiestSoftirqPercent)
		v.rx, v.tx = append(v.rx, float64(k.NetRX)), append(v.tx, float64(k.NetTX))
		if k.Bytes > 0 {
			gb := float64(k.Bytes) / 1e9
			v.user = append(v.user, k.UserSeconds/gb)
			v.sys = append(v.sys, k.SystemSeconds/gb)
			v.soft = append(v.soft, k.SoftirqSeconds/gb)
			if p := k.Pinned; p != nil {
				v.pinned = p.Cores
				v.pSys = append(v.pSys, p.SystemSeconds/gb)
				v.pSoft = append(v.pSoft, p.SoftirqSeconds/gb)
			}
		}
		if c.Transactions > 0 {
			v.sysT = append(v.sysT, 1e6*k.SystemSeconds/c.Transactions)
			v.softT = append(v.softT, 1e6*k.SoftirqSeconds/c.Transactions)
		}
	}
	var out []KernelRow
	for _, s := range series {
		v := by[s]
		if v == nil {
			continue
		}
		out = append(out, KernelRow{Series: s, Cells: v.n,
			UserPerGB: nonNegative(v.user), SystemPerGB: nonNegative(v.sys), SoftirqPerGB: nonNegative(v.soft),
			SystemUSPerTrans: nonNegative(v.sysT), SoftirqUSPerTrans: nonNegative(v.softT),
			BusiestSoftirq: nonNegative(v.busy), NetRX: nonNegative(v.rx), NetTX: nonNegative(v.tx),
			PinnedCores: v.pinned, PinnedSystemPerGB: nonNegative(v.pSys), PinnedSoftirqPerGB: nonNegative(v.pSoft)})
	}
	return out
}
