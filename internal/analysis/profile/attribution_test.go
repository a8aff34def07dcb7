package profile

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// cellOf is a profiled cell of 2 s at 100 Hz whose stacks are written to
// dir; nil stacks: a cell without a profile.
func cellOf(t *testing.T, dir string, index int, series, kase string, chunk int, s record.Stacks) record.Cell {
	t0 := time.Date(2026, 12, 2, 10, 0, index*2, 0, time.UTC)
	c := record.Cell{Index: index, Mode: series, Case: kase, Chunk: chunk, Start: t0, End: t0.Add(2 * time.Second), Samples: 1000,
		Kernel: &record.CellKernel{CPUSeconds: 4, UserSeconds: 1, SystemSeconds: 0.5, SoftirqSeconds: 0.5}}
	if s != nil {
		c.Profile = &record.CellProfile{Hz: 100, CPUs: 2, Seconds: 2, File: record.StacksFile(index)}
		if err := record.WriteStacks(filepath.Join(dir, c.Profile.File), s); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func rowOf(tab Table, name string) (Row, bool) {
	for _, r := range tab.Rows {
		if r.Name == name {
			return r, true
		}
	}
	return Row{}, false
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func TestAttribute(t *testing.T) {
	tcp := "server;x;tcp_sendmsg_[k]"
	br := "other;x;handle_softirqs_[k];br_forward_[k]"
	idle := "idle;do_idle_[k]"
	for _, c := range []struct {
		name string
		// cells: series, case, chunk, stacks; obs: socket tests' cells by index
		cells func(t *testing.T, dir string) []record.Cell
		obs   []analysis.Observation
		check func(t *testing.T, tabs []Table)
	}{
		{
			name: "ping-pong: per request, the difference paired by chunk, idle left out",
			cells: func(t *testing.T, dir string) []record.Cell {
				return []record.Cell{
					cellOf(t, dir, 0, "bare", "", 0, record.Stacks{tcp: 100, idle: 50}),
					cellOf(t, dir, 1, "bridge", "", 0, record.Stacks{tcp: 100, br: 40, idle: 10}),
					cellOf(t, dir, 2, "bare", "", 1, record.Stacks{tcp: 100}),
					cellOf(t, dir, 3, "bridge", "", 1, record.Stacks{tcp: 100, br: 60}),
					cellOf(t, dir, 4, "bridge", "", 2, nil), // not profiled
				}
			},
			check: func(t *testing.T, tabs []Table) {
				if len(tabs) != 1 || tabs[0].PerGB || tabs[0].Refs["bridge"] != "bare" || tabs[0].Cells["bridge"] != 2 {
					t.Fatalf("tables %+v", tabs)
				}
				// 1000 requests over 2 s: 500/s; n samples at 100 Hz over
				// 2 s are n/200 CPUs, n*10 µs per request.
				for _, w := range []struct {
					row, series string
					mean, diff  float64
				}{
					{"TCP/UDP and sockets", "bare", 1000, math.NaN()},
					{"bridge", "bridge", 500, 500},
					{"bridge", "bare", 0, math.NaN()},
					{rowNamed, "bridge", 1500, 500},
					{rowTotal, "bridge", 1500, 500},
					{Other, "bridge", 0, 0},
					{rowKernel, "bare", 2000, math.NaN()}, // 2 s of 4 over 2 s: one CPU, over 500/s
					{rowGap, "bridge", -500, 500},         // 1500 sampled, 2000 counted
					{"in " + InSoftirq, "bridge", 500, 500},
					{"in server", "bare", 1000, math.NaN()},
				} {
					r, ok := rowOf(tabs[0], w.row)
					if !ok {
						t.Fatalf("no row %q", w.row)
					}
					if m := r.Values[w.series]; !near(m.Mean, w.mean) || m.N != 2 {
						t.Errorf("%s, %s: %+v; want mean %g over 2 cells", w.row, w.series, m, w.mean)
					}
					if d, ok := r.Diffs[w.series]; ok != !math.IsNaN(w.diff) || ok && (!near(d.Diff, w.diff) || d.Units != 2) {
						t.Errorf("%s, %s: difference %+v (%v); want %g", w.row, w.series, d, ok, w.diff)
					}
				}
				if _, ok := rowOf(tabs[0], "data copy"); ok {
					t.Error("a part no series sampled is shown")
				}
			},
		},
		{
			name: "socket tests: per transaction and per GB, one table per case",
			cells: func(t *testing.T, dir string) []record.Cell {
				return []record.Cell{
					cellOf(t, dir, 0, "bare", "rr", 0, record.Stacks{tcp: 100}),
					cellOf(t, dir, 1, "bare", "stream", 0, record.Stacks{tcp: 100}),
					cellOf(t, dir, 2, "bare", "grid", 0, record.Stacks{tcp: 100}), // no work counted
				}
			},
			obs: []analysis.Observation{
				{Cell: 0, Values: map[string]float64{"trans_per_s": 1000}},
				{Cell: 1, Values: map[string]float64{}, Moved: 2e9},
				{Cell: 2, Values: map[string]float64{}},
			},
			check: func(t *testing.T, tabs []Table) {
				if len(tabs) != 2 || tabs[0].Case != "rr" || tabs[0].PerGB || tabs[1].Case != "stream" || !tabs[1].PerGB {
					t.Fatalf("tables %+v", tabs)
				}
				// 100 samples over 2 s at 100 Hz: half a CPU; over 1000
				// transactions/s, 500 µs each; over 1 GB/s, 0.5 s per GB.
				for i, want := range []float64{500, 0.5} {
					r, _ := rowOf(tabs[i], "TCP/UDP and sockets")
					if m := r.Values["bare"]; !near(m.Mean, want) || len(r.Diffs) != 0 {
						t.Errorf("%s: %+v %v; want %g, no difference without a reference", tabs[i].Case, m, r.Diffs, want)
					}
				}
			},
		},
		{
			name: "no cell profiled: nothing",
			cells: func(t *testing.T, dir string) []record.Cell {
				return []record.Cell{cellOf(t, dir, 0, "bare", "", 0, nil)}
			},
			check: func(t *testing.T, tabs []Table) {
				if len(tabs) != 0 {
					t.Errorf("tables %+v", tabs)
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			meta := record.Meta{Cells: c.cells(t, dir), Modes: []record.ModeMeta{{Mode: "bare"}, {Mode: "bridge"}}}
			tabs, err := Attribute(Input{Dir: dir, Meta: meta, Obs: c.obs, RefOf: analysis.One("bare"), Map: Default()})
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, tabs)
		})
	}
}

func TestAttributeRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(dir string, c *record.Cell) error
		want   string
	}{
		{"a file that is not gzip", func(dir string, c *record.Cell) error {
			return os.WriteFile(filepath.Join(dir, c.Profile.File), []byte("not gzip"), 0o644)
		}, "cell 0's stacks: read"},
		{"a file not the cell's", func(dir string, c *record.Cell) error {
			c.Profile.File = "../run.json"
			return nil
		}, `cell 0's stacks: file "../run.json", not stacks/00000.folded.gz`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cell := cellOf(t, dir, 0, "bare", "", 0, record.Stacks{"server;x": 1})
			if err := c.change(dir, &cell); err != nil {
				t.Fatal(err)
			}
			_, err := Attribute(Input{Dir: dir, Meta: record.Meta{Cells: []record.Cell{cell}}, RefOf: analysis.One("bare"), Map: Default()})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Attribute: %v; want %q", err, c.want)
			}
		})
	}
}
