package report

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/figure"
)

// addCost adds each run's cost table (seed 000: CPU and memory per mode)
// and its CPU per core over time.
func (r *Report) addCost() {
	for ri, run := range r.Runs {
		suffix, idSuffix := "", ""
		if len(r.Runs) > 1 {
			suffix, idSuffix = " · "+run.Label, fmt.Sprintf("-%d", ri)
		}
		t := Table{ID: "tab-cost" + idSuffix, Title: "CPU and memory per mode" + suffix,
			Caption: "The servers' CPU (user + system seconds, from their cgroup for containers, /proc for plain processes) over the whole run, the CPU seconds per GB of message bodies moved, and each server's peak memory (cgroup: with page cache; /proc: resident set).",
			Columns: []string{"mode", "ping CPU s (user/sys)", "pong CPU s (user/sys)", "data moved (GB)", "CPU s per GB", "ping peak memory (MB)", "pong peak memory (MB)"}}
		for _, m := range run.Meta.Modes {
			ping, pong := m.Usage["ping"], m.Usage["pong"]
			if ping.Source == "" && pong.Source == "" {
				continue
			}
			gb := float64(m.Bytes) / 1e9
			perGB := (ping.CPUSeconds + pong.CPUSeconds) / gb
			t.Rows = append(t.Rows, []Cell{{Text: m.Mode},
				{Text: fmt.Sprintf("%.2f (%.2f/%.2f)", ping.CPUSeconds, ping.UserSeconds, ping.SystemSeconds)},
				{Text: fmt.Sprintf("%.2f (%.2f/%.2f)", pong.CPUSeconds, pong.UserSeconds, pong.SystemSeconds)},
				{Text: f(gb, 2)}, {Text: f(perGB, 2)},
				{Text: f(float64(ping.MemoryPeak)/1e6, 1)}, {Text: f(float64(pong.MemoryPeak)/1e6, 1)}})
		}
		if mem := run.Meta.Memory; mem != nil {
			t.Caption += fmt.Sprintf(" The machine committed %.1f MB more memory at its peak than before the labs were built (Committed_AS %.1f → %.1f MB; all modes' labs ran side by side).",
				float64(mem.CommittedDelta)/1e6, float64(mem.CommittedBefore)/1e6, float64(mem.CommittedPeak)/1e6)
		}
		if len(t.Rows) > 0 {
			r.Tables = append(r.Tables, t)
		}
		if len(run.CPU) < 2 {
			continue
		}
		// CPU per core over time: one core saturated can hide in the average.
		t0 := run.CPU[0].Time.Add(-secondsDur(run.CPU[0].Seconds))
		all := figure.Series{Name: "all cores"}
		cores := make([]figure.Series, len(run.CPU[0].Cores))
		for i := range cores {
			cores[i].Name = fmt.Sprintf("core %d", i)
		}
		for _, c := range run.CPU {
			x := c.Time.Sub(t0).Seconds()
			all.X, all.Median = append(all.X, x), append(all.Median, c.All)
			for i := range cores {
				if i < len(c.Cores) {
					cores[i].X, cores[i].Median = append(cores[i].X, x), append(cores[i].Median, c.Cores[i])
				}
			}
		}
		hundred := 100.0
		zero := 0.0
		c := figure.Chart{Title: "CPU per core" + suffix, Subtitle: "busy share of each second (100 - idle)", XLabel: "Time since measuring began (s)", YLabel: "Busy (%)",
			Series: append([]figure.Series{all}, cores...), YMin: &zero, YMax: &hundred}
		r.add("fig-cpu"+idSuffix, "CPU per core over time"+suffix,
			"The whole machine's CPU each second while the cells ran (siege, ping and pong of every mode share it), per core and on average.", c)
	}
}
