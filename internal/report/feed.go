package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/export"
)

// Feed flattens a run for other tools' pipelines (export.WriteFeed): per
// case and series its figures as the report's tables show them (the mean
// and standard deviation over the repetitions, or a sweep's medians),
// each with its ratio to the reference (ref, "" for the run's own) and
// that ratio's 95 % interval, labelled instance "all"; and, for a run with
// several lab instances per mode, the same per instance, without ratios.
// A ping-pong sweep adds the 50th, 90th and 99th percentiles of its
// ping→pong latency. A run of ping-pong and socket tests gives the
// results of each kind (Views) in turn.
func Feed(run Run, ref string) export.Feed {
	views := run.Views()
	f := feedView(views[0], ref)
	for _, v := range views[1:] {
		f.Results = append(f.Results, feedView(v, ref).Results...)
	}
	return f
}

// feedView is Feed of one kind of run.
func feedView(run Run, ref string) export.Feed {
	meta := run.Meta
	run.named = ref != ""
	if ref == "" {
		ref = meta.Spec.ReferenceKey()
	}
	f := export.Feed{RunID: meta.ID, Start: meta.Started}
	if meta.Finished != nil {
		f.End = *meta.Finished
	}
	cases := RunCases(run, ref, DefaultOptions().Same)
	cis := map[ciKey]analysis.RatioCI{}
	for _, ci := range analysis.IntervalsWithin(cases, refOf(run, ref)) {
		cis[ciKey{ci.Case, ci.Mode, ci.Metric.Key}] = ci
	}
	refs := refOf(run, ref)
	instances := meta.Spec.LabInstances()
	cells := Cells(meta)
	for _, c := range cases {
		for _, series := range c.Series() {
			labels := feedLabels(meta, c, series)
			start, end := cellSpan(meta, c, series, -1)
			r := export.Result{Labels: labels, Start: start, End: end}
			var row analysis.CaseRow
			var srow analysis.ModeRow
			if c.Sweep != nil {
				srow = c.Sweep.Row(series)
			} else {
				for _, cr := range c.Rows {
					if cr.Series == series {
						row = cr
					}
				}
			}
			for _, m := range c.Metrics {
				fig := feedFigure(m.Key, m.Title, m.Unit, "", 0, 0)
				if c.Sweep != nil {
					fig.Value, fig.Stat, fig.N = srow.Value(m.Key), "median", srow.Samples
				} else {
					st := row.Stats[m.Key]
					fig.Value, fig.SD, fig.N = st.Mean.Value, st.SD.Value, st.N
				}
				if ci, ok := cis[ciKey{c.Label, series, m.Key}]; ok {
					fig.Reference = refs(series)
					fig.Ratio, fig.RatioLo, fig.RatioHi = ci.Ratio, ci.Lo, ci.Hi
					if d := ci.Diff; d != nil {
						fig.Diff = &export.Difference{Value: d.Diff, Lo: d.Lo, Hi: d.Hi}
					}
				}
				r.Figures = append(r.Figures, fig)
			}
			if c.Sweep != nil {
				r.Figures = append(r.Figures, latencyPercentiles(run.PingPong, series, cells, -1)...)
				r.Figures = append(r.Figures, serverCost(meta, series, -1)...)
				r.Figures = append(r.Figures, sweepKernel(meta, series)...)
				r.Figures = append(r.Figures, sweepTCP(meta, series)...)
			}
			f.Results = append(f.Results, r)
			if instances < 2 {
				continue
			}
			for i := range instances {
				il := maps.Clone(labels)
				il["instance"] = strconv.Itoa(i)
				start, end := cellSpan(meta, c, series, i)
				ir := export.Result{Labels: il, Start: start, End: end}
				for _, m := range c.Metrics {
					xs := c.InstanceValues(series, m.Key)[i]
					if len(xs) == 0 {
						continue
					}
					fig := feedFigure(m.Key, m.Title, m.Unit, "", stats.Mean(xs), len(xs))
					fig.SD = stats.StdDev(xs)
					ir.Figures = append(ir.Figures, fig)
				}
				if c.Sweep != nil {
					ir.Figures = append(ir.Figures, latencyPercentiles(run.PingPong, series, cells, i)...)
					ir.Figures = append(ir.Figures, serverCost(meta, series, i)...)
				}
				if len(ir.Figures) > 0 {
					f.Results = append(f.Results, ir)
				}
			}
		}
	}
	return f
}

// feedFigure is a figure of value v over n (0: not known), stat as
// export.Figure.Stat says, with no spread and no ratio to the reference
// (NaN) until the caller knows them.
func feedFigure(key, title, unit, stat string, v float64, n int) export.Figure {
	return export.Figure{Key: key, Title: title, Unit: unit, Stat: stat, Value: v, N: n, SD: math.NaN(), Ratio: math.NaN(), RatioLo: math.NaN(), RatioHi: math.NaN()}
}

// feedLabels name a case on a series: the run, the series with its mode,
// driver and variant (what follows "/" in the series' key), every
// instance ("all"), and the case with its workload, protocol and swept
// parameter.
func feedLabels(meta record.Meta, c analysis.Case, series string) map[string]string {
	mode, driver := meta.SplitSeries(series)
	_, variant, _ := strings.Cut(series, "/")
	return map[string]string{
		"run": meta.ID, "series": series, "mode": mode, "driver": driver, "variant": variant, "instance": "all",
		"case": c.Label, "workload": c.Workload, "protocol": c.Protocol, "param": c.Param, "value": c.Value,
	}
}

// cellSpan is the first start and the last end of the cells a case ran on
// a series (on one instance, or every one for instance -1); zero times
// when the run recorded none (an imported run).
func cellSpan(meta record.Meta, c analysis.Case, series string, instance int) (start, end time.Time) {
	for _, cell := range meta.Cells {
		if cell.Mode != series || (instance >= 0 && cell.Instance != instance) {
			continue
		}
		if c.Sweep == nil && cell.Case != c.Label {
			continue
		}
		if !cell.Start.IsZero() && (start.IsZero() || cell.Start.Before(start)) {
			start = cell.Start
		}
		if cell.End.After(end) {
			end = cell.End
		}
	}
	return start, end
}

// latencyPercentiles are the 50th, 90th and 99th percentiles of a mode's
// ping→pong latency over its successful samples (on one instance, or all
// for instance -1): perfdash's and ClusterLoader2's latency figures.
func latencyPercentiles(samples []record.Sample, mode string, cells map[int]analysis.Cell, instance int) []export.Figure {
	var xs []float64
	for _, s := range samples {
		if s.Mode != mode || !s.OK() || !(s.DurationMS > 0) {
			continue
		}
		if instance >= 0 {
			if c, ok := cells[s.Cell]; !ok || c.Instance != instance {
				continue
			}
		}
		xs = append(xs, s.DurationMS)
	}
	if len(xs) == 0 {
		return nil
	}
	slices.Sort(xs)
	var out []export.Figure
	for _, p := range []int{50, 90, 99} {
		out = append(out, feedFigure(fmt.Sprintf("latency_p%d", p), fmt.Sprintf("Latency ping→pong, %dth percentile", p), "ms", "value",
			stats.Quantile(xs, float64(p)/100), len(xs)))
	}
	return out
}

// serverCost is a sweep's cost table (addCost) for a series, on one
// instance of its lab or summed over all (-1): each server role's CPU
// seconds over the run and its peak memory, and the servers' CPU seconds
// per GB of payload moved. Socket cases carry their own cost per
// repetition instead.
func serverCost(meta record.Meta, series string, instance int) []export.Figure {
	cpu, peak := map[string]float64{}, map[string]float64{}
	var roles []string
	var moved int64
	for _, m := range meta.Modes {
		if m.Mode != series || len(m.Usage) == 0 || (instance >= 0 && m.Instance != instance) {
			continue
		}
		moved += m.Bytes
		for role, u := range m.Usage {
			if !slices.Contains(roles, role) {
				roles = append(roles, role)
			}
			cpu[role] += u.CPUSeconds
			peak[role] = max(peak[role], float64(u.MemoryPeak)/1e6)
		}
	}
	slices.Sort(roles)
	var out []export.Figure
	var total float64
	for _, role := range roles {
		out = append(out, feedFigure(role+"_server_cpu", role+" server CPU over the run (user + system)", "s", "value", cpu[role], 0))
		total += cpu[role]
	}
	if moved > 0 && len(roles) > 0 {
		out = append(out, feedFigure("servers_cpu_per_gb", "Servers' CPU per GB of payload moved", "s/GB", "value", total/(float64(moved)/1e9), 0))
	}
	for _, role := range roles {
		out = append(out, feedFigure(role+"_server_mem", role+" server peak memory", "MB", "value", peak[role], 0))
	}
	return out
}

// sweepKernel is a sweep's kernel time on a series (tab-kernel's row; a
// socket test's case carries it among its metrics): means over the cells
// with their count, none for a run that recorded none.
func sweepKernel(meta record.Meta, series string) []export.Figure {
	var row *analysis.KernelRow
	for _, r := range analysis.KernelRows(meta) {
		if r.Series == series {
			row = &r
		}
	}
	if row == nil {
		return nil
	}
	var out []export.Figure
	add := func(key, title, unit string, m analysis.MeanCI) {
		if m.N == 0 || math.IsNaN(m.Mean) || math.IsInf(m.Mean, 0) {
			return
		}
		out = append(out, feedFigure(key, title, unit, "", m.Mean, m.N))
	}
	add("user_per_gb", "User time per GB moved, all cores", "s/GB", row.UserPerGB)
	add("system_per_gb", "System time per GB moved", "s/GB", row.SystemPerGB)
	add("softirq_per_gb", "Softirq time per GB moved", "s/GB", row.SoftirqPerGB)
	add("system_us_per_trans", "System time per request", "µs", row.SystemUSPerTrans)
	add("softirq_us_per_trans", "Softirq time per request", "µs", row.SoftirqUSPerTrans)
	add("busiest_softirq", "Softirq share of the busiest core", "% of the core", row.BusiestSoftirq)
	add("net_rx", "NET_RX softirqs per cell", "count", row.NetRX)
	add("net_tx", "NET_TX softirqs per cell", "count", row.NetTX)
	return out
}

// sweepTCP is ping-pong's TCP_INFO on a series over its cells (the
// tab-tcpinfo and tab-tcpservers rows): retransmits summed, smoothed RTT
// as the mean over the connections, per sender.
func sweepTCP(meta record.Meta, series string) []export.Figure {
	var out []export.Figure
	clients, servers := analysis.TCPRows(meta)
	for _, rows := range [][]analysis.TCPRow{clients, servers} {
		for _, r := range rows {
			if r.Mode != series {
				continue
			}
			sender, who := "siege", "siege's connections to ping"
			if r.Side != "" {
				sender, who = r.Side, sideNames[r.Side]
			}
			out = append(out, feedFigure(sender+"_retransmits", "Retransmitted segments, "+who, "count", "value", float64(r.Retransmits), r.Cells),
				feedFigure(sender+"_srtt", "Smoothed RTT, "+who, "µs", "value", r.RTTUS, r.Cells))
		}
	}
	return out
}
