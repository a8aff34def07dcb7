package report

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/figure"
)

// addCost adds each run's cost table (the 2017 Coherence thesis: CPU and memory per mode)
// and its CPU per core over time.
func (r *Report) addCost() {
	for ri, run := range r.Runs {
		suffix, idSuffix := runSuffix(r.Runs, ri)
		// The servers' roles: ping and pong, or the other workloads' servers.
		var roles []string
		for _, m := range run.Meta.Modes {
			for role := range m.Usage {
				if !slices.Contains(roles, role) {
					roles = append(roles, role)
				}
			}
		}
		sort.Strings(roles)
		t := Table{ID: "tab-cost" + idSuffix, Title: "Servers' CPU and memory per mode" + suffix,
			Caption: "The servers' CPU (user + system seconds, from their cgroup for containers, /proc for plain processes) over the whole run, the CPU seconds per GB of payload moved, and each server's peak memory (cgroup: with page cache; /proc: resident set).",
			Columns: []string{"mode"}}
		for _, role := range roles {
			t.Columns = append(t.Columns, role+" CPU s (user/sys)")
		}
		t.Columns = append(t.Columns, "data moved (GB)", "servers' CPU s per GB")
		for _, role := range roles {
			t.Columns = append(t.Columns, role+" peak memory (MB)")
		}
		// Beside the servers' own, the kernel's system and softirq time per
		// GB over the mode's cells, where the run recorded them.
		kernel := slices.ContainsFunc(run.Meta.Cells, func(c record.Cell) bool { return c.Kernel.Sane() })
		if kernel {
			t.Columns = append(t.Columns, "machine system s per GB", "machine softirq s per GB")
			t.Caption += " Machine system and softirq s per GB: the kernel's time over every core while the mode's cells ran (from /proc/stat), per GB those cells moved; see the table of where the CPU went."
		}
		for _, m := range run.Meta.Modes {
			if len(m.Usage) == 0 {
				continue
			}
			row := []Cell{{Text: instanceLabel(m.Mode, m.Instance)}} // one row per instance of the mode's lab
			var cpu float64
			for _, role := range roles {
				u := m.Usage[role]
				cpu += u.CPUSeconds
				row = append(row, Cell{Text: fmt.Sprintf("%.2f (%.2f/%.2f)", u.CPUSeconds, u.UserSeconds, u.SystemSeconds)})
			}
			gb := float64(m.Bytes) / 1e9
			row = append(row, Cell{Text: f(gb, 2)}, Cell{Text: f(cpu/gb, 2)})
			for _, role := range roles {
				row = append(row, Cell{Text: f(float64(m.Usage[role].MemoryPeak)/1e6, 1)})
			}
			if kernel {
				sys, soft, bytes, ok := modeKernel(run.Meta, m.Mode, m.Instance)
				kgb := math.NaN()
				if ok && bytes > 0 {
					kgb = float64(bytes) / 1e9
				}
				row = append(row, value(sys/kgb), value(soft/kgb))
			}
			t.Rows = append(t.Rows, row)
		}
		if mem := run.Meta.Memory; mem != nil {
			t.Caption += fmt.Sprintf(" The machine committed %.1f MB more memory at its peak than before the labs were built (Committed_AS %.1f → %.1f MB; all modes' labs ran side by side).",
				float64(mem.CommittedDelta)/1e6, float64(mem.CommittedBefore)/1e6, float64(mem.CommittedPeak)/1e6)
		}
		if len(t.Rows) > 0 {
			r.Tables = append(r.Tables, t)
		}
		if dt, ok := daemonTable(run.Meta, suffix, idSuffix); ok {
			r.Tables = append(r.Tables, dt)
		}
		r.addKernel(run.Meta, suffix, idSuffix)
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
			"The whole machine's CPU each second while the cells ran (clients and servers of every mode share it), per core and on average.", c)
	}
}
