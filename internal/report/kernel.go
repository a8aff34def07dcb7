package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// kernelCaption says what the kernel-time table holds.
const kernelCaption = "Where the machine's CPU went while each series' cells ran, from /proc/stat per core (the kernel's count in 10 ms ticks) " +
	"and /proc/softirqs: user, system and softirq seconds summed over every core, per GB of payload the cell moved, " +
	"and per request where the workload counts them; the softirq share of the core that spent most in softirq; " +
	"the NET_RX and NET_TX softirqs per cell. Means over the cells with their 95 % intervals (Student's t over the cells). " +
	"Both files are the machine's: every lab host here runs on the one kernel, so the figures hold the clients', the servers' " +
	"and the kernel's packet work of the lab that ran, and whatever else ran on the machine then."

// ciCell is a mean with its interval: "0.42 [0.40, 0.44]", "–" when none.
func ciCell(m analysis.MeanCI) string {
	if m.N == 0 || math.IsNaN(m.Mean) {
		return "–"
	}
	p := prec(m.Mean)
	if math.IsNaN(m.Lo) {
		return f(m.Mean, p)
	}
	return fmt.Sprintf("%s [%s, %s]", f(m.Mean, p), f(m.Lo, p), f(m.Hi, p))
}

// kernelTable is a run's kernel time per series (analysis.KernelRows);
// with pinned cores, their system and softirq per GB follow.
func kernelTable(m record.Meta) cellTable {
	rows := analysis.KernelRows(m)
	t := cellTable{id: "tab-kernel", title: "Where the CPU went: user, system and softirq time per mode", caption: kernelCaption,
		heading: "where the CPU went (the kernel's count over all cores, per cell: mean [95 % interval])"}
	var perTrans, pinned bool
	for _, r := range rows {
		perTrans = perTrans || r.SoftirqUSPerTrans.N > 0
		pinned = pinned || r.PinnedCores != nil
	}
	t.cols = []string{"mode", "cells", "user s/GB", "system s/GB", "softirq s/GB"}
	if perTrans {
		t.cols = append(t.cols, "system µs/req", "softirq µs/req")
	}
	t.cols = append(t.cols, "busiest core softirq %", "NET_RX/cell", "NET_TX/cell")
	if pinned {
		t.cols = append(t.cols, "pinned cores", "pinned system s/GB", "pinned softirq s/GB")
		t.caption += " Pinned: the same over the cores a cores condition pinned the lab's hosts (and their routers) to."
	}
	for _, r := range rows {
		row := []string{r.Series, fmt.Sprint(r.Cells), ciCell(r.UserPerGB), ciCell(r.SystemPerGB), ciCell(r.SoftirqPerGB)}
		if perTrans {
			row = append(row, ciCell(r.SystemUSPerTrans), ciCell(r.SoftirqUSPerTrans))
		}
		row = append(row, ciCell(r.BusiestSoftirq), f(r.NetRX.Mean, 0), f(r.NetTX.Mean, 0))
		if pinned {
			cores := "–"
			if r.PinnedCores != nil {
				cores = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(r.PinnedCores)), ","), "[]")
			}
			row = append(row, cores, ciCell(r.PinnedSystemPerGB), ciCell(r.PinnedSoftirqPerGB))
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// IdleRow is one daemon of one lab at rest.
type IdleRow struct {
	Mode          string
	Instance      int
	Daemon        string
	WindowSeconds float64
	record.IdleDaemon
}

// IdleRows are a run's labs' daemons at rest (record.ModeMeta.Idle), by
// lab in the run's order and by daemon name; nil when none was recorded.
func IdleRows(m record.Meta) []IdleRow {
	var out []IdleRow
	for _, mm := range m.Modes {
		if mm.Idle == nil {
			continue
		}
		names := make([]string, 0, len(mm.Idle.Daemons))
		for n := range mm.Idle.Daemons {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, IdleRow{Mode: mm.Mode, Instance: mm.Instance, Daemon: n, WindowSeconds: mm.Idle.WindowSeconds, IdleDaemon: mm.Idle.Daemons[n]})
		}
	}
	return out
}

const idleCaption = "What each lab's own daemons (overlay routers, Open vSwitch, flanneld, etcd, the delay line; on a cluster the node daemons " +
	"the lab's pods are on, by role) spent at rest, read over a short window after the labs were built and before the first cell: " +
	"CPU as a share of one core, and memory at the window's end (cgroup: with page cache; proc: resident set; node daemons: working set). " +
	"A mode pays this whether or not it carries traffic."

// idleTable is a run's labs' daemons at rest.
func idleTable(m record.Meta) cellTable {
	t := cellTable{id: "tab-idle", title: "The labs' daemons at rest", caption: idleCaption, heading: "the labs' daemons at rest, before the first cell",
		cols: []string{"mode", "daemon", "nodes", "CPU % of a core", "memory MB", "source", "window s"}}
	for _, r := range IdleRows(m) {
		label := r.Mode
		if r.Instance > 0 {
			label = fmt.Sprintf("%s (instance %d)", r.Mode, r.Instance)
		}
		nodes := "–"
		if r.Nodes > 0 {
			nodes = fmt.Sprint(r.Nodes)
		}
		t.rows = append(t.rows, []string{label, r.Daemon, nodes, f(r.CPUPercent, 2), f(float64(r.MemoryBytes)/1e6, 1), r.Source, f(r.WindowSeconds, 1)})
	}
	return t
}

// addKernel adds a run's kernel-time table and its daemons-at-rest table,
// where it recorded them, to the cost section.
func (r *Report) addKernel(m record.Meta, suffix, idSuffix string) {
	r.addCells(kernelTable(m), suffix, idSuffix)
	r.addCells(idleTable(m), suffix, idSuffix)
}

// modeKernel sums a mode instance's cells' system and softirq seconds,
// with the bytes those cells moved, for the cost table's columns; ok is
// false when no cell of it recorded them.
func modeKernel(m record.Meta, mode string, instance int) (sys, soft float64, bytes int64, ok bool) {
	for _, c := range m.Cells {
		if c.Mode != mode || c.Instance != instance || c.Kernel == nil || !c.Kernel.Sane() {
			continue
		}
		sys += c.Kernel.SystemSeconds
		soft += c.Kernel.SoftirqSeconds
		bytes += c.Kernel.Bytes
		ok = true
	}
	return sys, soft, bytes, ok
}
