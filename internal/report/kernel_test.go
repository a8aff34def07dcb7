package report

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// TestKernelTables: a ping-pong run's cells with kernel records give one
// row per series in the run's order, per request from the cells'
// samples; cells without a record, or with a damaged one, count nowhere;
// a run without any prints no table and its cost table keeps its columns.
func TestKernelTables(t *testing.T) {
	modes := []record.ModeMeta{
		{Mode: "bridge", Bytes: 2e9, Usage: map[string]record.Usage{"ping": {CPUSeconds: 1}},
			Idle: &record.IdleCost{WindowSeconds: 2, Daemons: map[string]record.IdleDaemon{"router-siege": {CPUPercent: 1.5, MemoryBytes: 8e6, Source: "cgroup"}}}},
		{Mode: "bare", Bytes: 1e9, Usage: map[string]record.Usage{"ping": {CPUSeconds: 1}}},
	}
	k := func(soft float64, bytes int64) *record.CellKernel {
		return &record.CellKernel{CPUSeconds: 4, UserSeconds: 1, SystemSeconds: 0.5, SoftirqSeconds: soft, BusiestSoftirqPercent: 40, NetRX: 100, NetTX: 10, Bytes: bytes}
	}
	damaged := &record.CellKernel{CPUSeconds: 1, SoftirqSeconds: 5, Bytes: 1e9}
	tests := []struct {
		name    string
		cells   []record.Cell
		series  []string
		softirq map[string]string // series → its softirq s/GB cell
		costCol bool
	}{
		{"none recorded", []record.Cell{{Mode: "bare"}, {Mode: "bridge"}}, nil, nil, false},
		{"series order", []record.Cell{
			{Mode: "bare", Samples: 1000, Kernel: k(0.2, 1e9)},
			{Mode: "bridge", Samples: 1000, Kernel: k(0.6, 1e9)},
			{Mode: "bridge", Samples: 1000, Kernel: k(1.0, 1e9)},
			{Mode: "bare", Samples: 10},
			{Mode: "bare", Samples: 10, Kernel: damaged},
		}, []string{"bridge", "bare"}, map[string]string{"bare": "0.200", "bridge": "0.800 [0.000, 3.341]"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := record.Meta{Modes: modes, Cells: tt.cells}
			rows := analysis.KernelRows(m)
			var got []string
			for _, r := range rows {
				got = append(got, r.Series)
				if s := ciCell(r.SoftirqPerGB); s != tt.softirq[r.Series] {
					t.Errorf("%s softirq s/GB %q, want %q", r.Series, s, tt.softirq[r.Series])
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.series, ",") {
				t.Errorf("series %v, want %v", got, tt.series)
			}
			if len(rows) > 0 && (rows[0].SoftirqUSPerTrans.Mean != 800 || rows[1].Cells != 1) {
				t.Errorf("bridge softirq µs/req %v (want 800), bare cells %d (want 1)", rows[0].SoftirqUSPerTrans.Mean, rows[1].Cells)
			}
			var sb strings.Builder
			if err := kernelTable(m).write(&sb); err != nil {
				t.Fatal(err)
			}
			if (sb.Len() == 0) != (tt.series == nil) || (tt.series != nil && !strings.Contains(sb.String(), "softirq µs/req")) {
				t.Errorf("table %q for rows %+v", sb.String(), rows)
			}
			r := &Report{Runs: []Run{{Meta: m}}}
			r.addCost()
			var cost, kernel, idle *Table
			for i := range r.Tables {
				switch r.Tables[i].ID {
				case "tab-cost":
					cost = &r.Tables[i]
				case "tab-kernel":
					kernel = &r.Tables[i]
				case "tab-idle":
					idle = &r.Tables[i]
				}
			}
			if cost == nil || idle == nil || (kernel != nil) != tt.costCol {
				t.Fatalf("tables: cost %v, kernel %v, idle %v", cost != nil, kernel != nil, idle != nil)
			}
			has := strings.Contains(strings.Join(cost.Columns, "|"), "machine softirq s per GB")
			if has != tt.costCol {
				t.Errorf("cost table's kernel columns %v, want %v: %v", has, tt.costCol, cost.Columns)
			}
			if has {
				// bridge: 1.6 s of softirq over its 2 GB of cells.
				if last := cost.Rows[0][len(cost.Rows[0])-1].Text; last != "0.800" {
					t.Errorf("bridge's softirq s per GB %q, want 0.800", last)
				}
			}
			if idle.Rows[0][1].Text != "router-siege" || idle.Rows[0][3].Text != "1.50" {
				t.Errorf("idle row %+v", idle.Rows[0])
			}
		})
	}
}

func TestCellKernelSane(t *testing.T) {
	for _, tt := range []struct {
		name string
		k    *record.CellKernel
		want bool
	}{
		{"nil", nil, false},
		{"fine", &record.CellKernel{CPUSeconds: 2, UserSeconds: 1, SoftirqSeconds: 0.5, BusiestSoftirqPercent: 50}, true},
		{"no capacity", &record.CellKernel{}, false},
		{"parts past capacity", &record.CellKernel{CPUSeconds: 2, UserSeconds: 1.5, SystemSeconds: 1}, false},
		{"negative", &record.CellKernel{CPUSeconds: 2, SoftirqSeconds: -1}, false},
		{"share past 100", &record.CellKernel{CPUSeconds: 2, BusiestSoftirqPercent: 101}, false},
		{"negative bytes", &record.CellKernel{CPUSeconds: 2, Bytes: -1}, false},
		{"damaged pinned", &record.CellKernel{CPUSeconds: 2, Pinned: &record.CellKernel{}}, false},
		{"huge", &record.CellKernel{CPUSeconds: 1e300}, false},
	} {
		if got := tt.k.Sane(); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
