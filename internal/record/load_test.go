package record

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDisturbance(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	// cell makes a cell of a 2 s × 2 CPU capacity with outside work o
	// seconds (nil: unknown) and steal s seconds.
	cell := func(o *float64, s float64) Cell {
		l := &CellLoad{CPUSeconds: 4, BusySeconds: 2, StealSeconds: s, StealPercent: 100 * s / 4}
		if o != nil {
			l.OutsideSeconds, l.OutsidePercent = o, f(100**o/4)
		}
		return Cell{Load: l}
	}
	quiet := cell(f(0.1), 0) // 2.5 %
	busy := cell(f(2), 0)    // 50 %
	// shortCell is a cell of 20 ms on 2 CPUs with pct % of its ticks outside.
	shortCell := func(pct float64) Cell {
		return Cell{Load: &CellLoad{CPUSeconds: 0.04, BusySeconds: 0.04, OutsideSeconds: f(0.04 * pct / 100), OutsidePercent: f(pct)}}
	}
	short := shortCell(75)
	many := func(c Cell, n int) []Cell {
		out := make([]Cell, n)
		for i := range out {
			out[i] = c
		}
		return out
	}
	// A burst: 50 of 200 short cells at 30 %, 7.5 % over the run.
	burst := append(append(many(shortCell(0), 75), many(shortCell(30), 50)...), many(shortCell(0), 75)...)
	cases := []struct {
		name      string
		cells     []Cell
		disturbed bool
		past      int
		why       string
	}{
		{"old run: no load", []Cell{{}, {}}, false, 0, ""},
		// Damaged loads are left out: negative, more than the capacity, absurd.
		{"damaged", []Cell{cell(f(-40), 0), cell(f(5), 0), cell(f(0), -1), {Load: &CellLoad{CPUSeconds: 1e300, OutsideSeconds: f(1e300)}}}, false, 0, ""},
		{"quiet", []Cell{quiet, quiet, quiet, quiet}, false, 0, "2.5 %"},
		{"busy throughout", []Cell{busy, busy, busy}, true, 3, "50.0 % of the machine's CPU (limit 10 %)"},
		// 2 of 8 cells at 50 %: 14.4 % over the run.
		{"over the run", []Cell{busy, busy, quiet, quiet, quiet, quiet, quiet, quiet}, true, 2, "past a limit in 2 of 8 stretches"},
		// 2 of 8 cells at 20 %: 6.9 % over the run, but a quarter of the cells.
		{"a quarter of the cells", []Cell{cell(f(0.8), 0), cell(f(0.8), 0), quiet, quiet, quiet, quiet, quiet, quiet}, true, 2, "6.9 %"},
		// 1 of 8 cells at 20 %: neither.
		{"one cell", []Cell{cell(f(0.8), 0), quiet, quiet, quiet, quiet, quiet, quiet, quiet}, false, 1, "1 of 8 stretches"},
		{"steal", []Cell{cell(f(0), 0.4), cell(f(0), 0.4)}, true, 2, "steal 10.0 % (limit 5 %)"},
		// A cluster's run: outside unknown, judged on steal alone.
		{"outside unknown", []Cell{cell(nil, 0), cell(nil, 0)}, false, 0, "steal 0.0 %"},
		// A smoke test of 8 cells of 20 ms: too short to judge.
		{"too short a run", many(short, 8), false, 0, "75.0 %"},
		// Short cells are judged together, 25 to a stretch of a CPU-second.
		{"short cells", many(short, 200), true, 8, "75.0 % of the machine's CPU (limit 10 %), steal 0.0 % (limit 5 %), past a limit in 8 of 8 stretches of cells"},
		{"a burst among short cells", burst, true, 2, "7.5 %"},
	}
	for _, c := range cases {
		m := Meta{Cells: c.cells}
		d := m.Disturbance()
		if d.Disturbed != c.disturbed || d.Past != c.past {
			t.Errorf("%s: disturbed %v with %d cells past, want %v with %d (%+v)", c.name, d.Disturbed, d.Past, c.disturbed, c.past, d)
		}
		if d.Cells > 0 && !strings.Contains(d.Why(), c.why) {
			t.Errorf("%s: %q does not say %q", c.name, d.Why(), c.why)
		}
		if (d.Warning() != "") != c.disturbed {
			t.Errorf("%s: warning %q", c.name, d.Warning())
		}
	}
}

// TestCellLoadIsOptional: a run.json written before loads were recorded
// reads without one, and a cell's load survives a round trip.
func TestCellLoadIsOptional(t *testing.T) {
	var old Meta
	if err := json.Unmarshal([]byte(`{"format":1,"cells":[{"index":0,"mode":"bare","start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:01Z","samples":1,"failed":0}]}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Cells[0].Load != nil || old.Disturbance().Disturbed {
		t.Errorf("an old run has a load: %+v", old.Cells[0].Load)
	}
	o := 1.0
	b, err := json.Marshal(Cell{Load: &CellLoad{CPUSeconds: 2, OutsideSeconds: &o}})
	if err != nil {
		t.Fatal(err)
	}
	var c Cell
	if err := json.Unmarshal(b, &c); err != nil || c.Load == nil || *c.Load.OutsideSeconds != 1 {
		t.Errorf("round trip: %s -> %+v, %v", b, c.Load, err)
	}
}
