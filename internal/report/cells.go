package report

// The tables of what a run's cells recorded beside their workload's
// lines, whatever the workload: TCP_INFO, kernel time, the labs' daemons
// at rest and what links' flaps did. Each is one cellTable, which the
// summary prints and the page shows.

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// cellTable is a table of a run's cells that the summary prints and the
// page shows alike (TCP_INFO, kernel time, daemons at rest, link flaps),
// whatever the workload: the page's id, title and caption, the summary's
// heading, the columns (short: the summary's, where they differ) and the
// rows as text.
type cellTable struct {
	id, title, caption, heading string
	cols, short                 []string
	rows                        [][]string
}

// write prints the table under its heading, nothing without rows.
func (t cellTable) write(w io.Writer) error {
	if len(t.rows) == 0 {
		return nil
	}
	cols := t.cols
	if t.short != nil {
		cols = t.short
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, t.heading)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	return tw.Flush()
}

// addCells adds the table to the page, its id and title with a run's suffixes
// (runSuffix), nothing without rows.
func (r *Report) addCells(t cellTable, suffix, idSuffix string) {
	if len(t.rows) == 0 {
		return
	}
	page := Table{ID: t.id + idSuffix, Title: t.title + suffix, Caption: t.caption, Columns: t.cols}
	for _, row := range t.rows {
		cells := make([]Cell, len(row))
		for i, s := range row {
			cells[i] = Cell{Text: s}
		}
		page.Rows = append(page.Rows, cells)
	}
	r.Tables = append(r.Tables, page)
}

// tcpCaption says what the TCP_INFO table holds.
const tcpCaption = "TCP_INFO of siege's connections to ping, read by siege as each closed: per series, over the cells, " +
	"siege's retransmitted segments (its requests, SYN and FIN: ping's lost answers are ping's to retransmit), " +
	"and the kernel's smoothed round trip and congestion window, means over the connections."

// serverTCPCaption says what the servers' TCP_INFO table holds.
const serverTCPCaption = "TCP_INFO of the servers' connections during each cell, from ping's and pong's sums (read by siege before and after the cell): " +
	"per series and side, over the cells, the retransmitted segments of the side's sender (ping's answers to siege, ping's requests to pong, pong's bodies to ping), " +
	"and the smoothed round trip and congestion window, means over the connections read (those open at the cell's end and those that closed during it)."

// sideNames says each side as its sender and receiver.
var sideNames = map[string]string{"ping": "ping → siege", "ping_to_pong": "ping → pong", "pong": "pong → ping"}

// tcpTables are a run's TCP_INFO tables: siege's connections, and the
// servers' by side.
func tcpTables(m record.Meta) []cellTable {
	client := cellTable{id: "tab-tcpinfo", title: "Siege's TCP connections", caption: tcpCaption,
		heading: "siege's TCP connections to ping (TCP_INFO, over the cells)"}
	server := cellTable{id: "tab-tcpservers", title: "The servers' TCP connections", caption: serverTCPCaption,
		heading: "the servers' TCP connections (TCP_INFO, over the cells; retransmits are the sender's)"}
	out := []cellTable{client, server}
	clients, servers := analysis.TCPRows(m)
	for i, rows := range [][]analysis.TCPRow{clients, servers} {
		side := i == 1
		t := &out[i]
		t.cols = []string{"mode", "cells", "connections", "retransmits", "smoothed RTT (µs)", "cwnd (segments)"}
		t.short = []string{"mode", "cells", "connections", "retrans", "srtt µs", "cwnd"}
		if side {
			t.cols, t.short = slices.Insert(t.cols, 1, "sender → receiver"), slices.Insert(t.short, 1, "sender → receiver")
		}
		for _, r := range rows {
			cells := []string{r.Mode, fmt.Sprint(r.Cells), fmt.Sprint(r.Connections), fmt.Sprint(r.Retransmits), textSig(r.RTTUS, 0), textSig(r.Cwnd, 1)}
			if side {
				cells = slices.Insert(cells, 1, sideNames[r.Side])
			}
			t.rows = append(t.rows, cells)
		}
	}
	return out
}

// addCellTCP adds, for each run whose cells recorded TCP_INFO, its tables:
// siege's connections, and the servers' by side.
func (r *Report) addCellTCP() {
	for i := range 2 {
		for ri, run := range r.Runs {
			suffix, idSuffix := runSuffix(r.Runs, ri)
			r.addCells(tcpTables(run.Meta)[i], suffix, idSuffix)
		}
	}
}

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
		for _, n := range slices.Sorted(maps.Keys(mm.Idle.Daemons)) {
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
		nodes := "–"
		if r.Nodes > 0 {
			nodes = fmt.Sprint(r.Nodes)
		}
		t.rows = append(t.rows, []string{instanceLabel(r.Mode, r.Instance), r.Daemon, nodes, f(r.CPUPercent, 2), f(float64(r.MemoryBytes)/1e6, 1), r.Source, f(r.WindowSeconds, 1)})
	}
	return t
}

// instanceLabel names an instance of a mode's lab in a row: MODE, or
// MODE (instance I).
func instanceLabel(mode string, instance int) string {
	if instance <= 0 {
		return mode
	}
	return fmt.Sprintf("%s (instance %d)", mode, instance)
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

// flapColumns are the link-flap table's columns, in the page and in text.
var flapColumns = []string{"series", "case", "rep", "workload", "link", "down–up s", "stall s", "idle intervals", "recovered after s", "retransmits", "lost", "worst round trip µs", "error"}

const flapCaption = "What each flap of a link (a spec's links[].flap) did to each client of its cell: when the link went down and up (seconds since the clients started), " +
	"the longest run of reporting intervals around it that moved nothing (a stream's received bytes, rr's transactions), the time from the link's up to the end of the first interval back at 90 % of the rate before the flap (– if none), " +
	"a stream's sender retransmits from the flap to that recovery (rr: TCP_INFO's for the whole cell), rr's lost requests in that window and its longest round trip (the cell's longest, or the window's highest interval p99 if higher: one transaction held up by the flap hides in an interval's p99), and the cell's error if a client failed. " +
	"A stall is known to an interval's length. " +
	"A ping-pong row (workload pingpong, its case the cell's sizes) counts requests instead: the requests that overlapped the flap (started before the link's up, ended after its down) and ping's retries among them, " +
	"the stall as the longest gap between two successful completions around the flap, the recovery as the time from the link's up to the first success after it, the siege's and servers' TCP_INFO retransmits of the whole cell, " +
	"the overlapping requests that failed (lost) and their longest latency; a cell whose requests all ended before the flap says so instead. " +
	"A disruption of a test cluster's daemon (a spec's disrupt) is a row of its own: its link is the daemon, its node and whose pod is there, down–up when it was gone and started again, " +
	"when it did its job again (ready) and how long after its down a pod created on its node then first answered a new connection from the client's pod; its stall is looked for until a few seconds after ready."

// flapRow is one effect as table text: a socket client's, or a ping-pong
// cell's requests, which count requests and retries where a client counts
// idle intervals.
func flapRow(e analysis.FlapEffect) []string {
	what := e.Workload
	if e.Client != "" {
		what += " " + e.Client
	}
	retrans := fmt.Sprint(e.Retransmits)
	if e.Retransmits < 0 {
		retrans = "–"
	}
	errText := e.Error
	if errText == "" {
		errText = "–"
	}
	rep, window, stall, counted := fmt.Sprint(e.Rep), fmt.Sprintf("%.2f–%.2f", e.Down, e.Up), f(e.Stall, 2), fmt.Sprint(e.StallIntervals)
	link := e.Link
	if e.Component != "" {
		link = e.Component + " " + e.Link
		opt := func(v float64) string { return map[bool]string{true: "–", false: f(v, 2)}[v == 0] }
		window += fmt.Sprintf(" (ready %s; new pod answered %s later)", opt(e.Ready), opt(e.NewPod))
		if e.NewPodError != "" {
			errText = strings.TrimPrefix(errText+"; new pod: "+e.NewPodError, "–; ")
		}
	}
	if e.PingPong {
		rep, counted = "–", fmt.Sprintf("%d requests, %d retries", e.Requests, e.Retries)
		if e.NotDone {
			window = fmt.Sprintf("not done (due %.2f)", e.At)
		}
		if e.Error == analysis.NotBeforeFlap {
			stall = "–"
		}
	}
	return []string{e.Series, e.Case, rep, what, link, window, stall, counted, f(e.Recover, 2), retrans, fmt.Sprint(e.Lost), f(e.Worst, 0), errText}
}

// flapTable is the link-flap table of a run's effects.
func flapTable(effects []analysis.FlapEffect) cellTable {
	t := cellTable{id: "tab-flaps", title: "Link flaps", caption: flapCaption, cols: flapColumns,
		heading: "link flaps (per cell and client: stall, recovery, retransmits, lost requests)"}
	for _, e := range effects {
		t.rows = append(t.rows, flapRow(e))
	}
	return t
}

// addFlaps adds, for each run whose links flapped, the link-flap table;
// a run without flaps adds nothing.
func (r *Report) addFlaps() {
	for ri, run := range r.Runs {
		name := func(mode string) string { return seriesName(r.Runs, run, mode) }
		suffix, idSuffix := runSuffix(r.Runs, ri)
		r.addCells(flapTable(analysis.Flaps(run.Meta, run.Contents, name)), suffix, idSuffix)
	}
}
