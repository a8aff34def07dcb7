package figure

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestLogTicks(t *testing.T) {
	tests := []struct {
		min, max float64
		labels   string // the labelled ticks
		n        int    // all ticks
	}{
		{0.01, 1000, "0.01,0.1,1,10,100,1000", 46}, // ab's 10 B … 1 MB in kB: 5 decades, 9 ticks each, and 1000
		{1, 10, "1,10", 10},                        // one decade
		{1, 9, "1,2,5", 9},                         // one power of ten: 2× and 5× labelled too
		{2, 8, "2,5", 7},                           // no power of ten inside
		{0, 10, "", 0},                             // not drawable on a log axis
		{10, 1, "", 0},
	}
	for _, tc := range tests {
		ticks := logTicks{}.Ticks(tc.min, tc.max)
		var labels []string
		for _, tk := range ticks {
			if !tk.IsMinor() {
				labels = append(labels, tk.Label)
			}
			if tk.Value < tc.min*(1-1e-9) || tk.Value > tc.max*(1+1e-9) {
				t.Errorf("%v..%v: tick %v outside", tc.min, tc.max, tk.Value)
			}
		}
		if got := strings.Join(labels, ","); got != tc.labels || len(ticks) != tc.n {
			t.Errorf("logTicks(%v, %v): labels %s (%d ticks), want %s (%d)", tc.min, tc.max, got, len(ticks), tc.labels, tc.n)
		}
	}
	s := logScale{}
	for _, tc := range []struct{ min, max, x, want float64 }{
		{1, 100, 10, 0.5}, {0.01, 1000, 0.01, 0}, {0.01, 1000, 1000, 1}, {1, 100, 0, math.NaN()}, {1, 100, -5, math.NaN()}, {0, 100, 5, math.NaN()},
	} {
		if got := s.Normalize(tc.min, tc.max, tc.x); !(math.Abs(got-tc.want) < 1e-12 || (math.IsNaN(got) && math.IsNaN(tc.want))) {
			t.Errorf("Normalize(%v, %v, %v) = %v, want %v", tc.min, tc.max, tc.x, got, tc.want)
		}
	}
}

// TestLogAxisChart: a chart with XLog draws sizes from 10 B to 1 MB (in
// kB) with a label at every power of ten, from the decade below the
// smallest size to the one above the largest, and leaves out what a log
// axis cannot show (0 and negative x) instead of failing.
func TestLogAxisChart(t *testing.T) {
	var x, y []float64
	for p := 0.01; p <= 100; p *= 10 {
		for k := 1.0; k <= 9; k++ {
			x = append(x, k*p)
			y = append(y, math.Log10(k*p)+3)
		}
	}
	c := Chart{Title: "log", XLabel: "Message size (kB, log scale)", YLabel: "MB/s", XLog: true,
		Series: []Series{{Name: "bare", X: append([]float64{0}, x...), Median: append([]float64{1}, y...), PX: []float64{-1, 0, 0.5}, PY: []float64{1, 2, 3}}},
		VLines: []float64{87.38, 174.76}}
	pc, err := c.prepare()
	if err != nil {
		t.Fatal(err)
	}
	if pc.xmin != 0.01 || pc.xmax != 1000 {
		t.Errorf("x range [%v, %v], want [0.01, 1000]", pc.xmin, pc.xmax)
	}
	if !math.IsNaN(pc.series[0].x[0]) || c.Series[0].X[0] != 0 {
		t.Errorf("x 0 is drawn at %v (the caller's value now %v): want a gap, the input unchanged", pc.series[0].x[0], c.Series[0].X[0])
	}
	svg, err := c.SVG(6*vg.Inch, 4*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg, "0.01", "0.1", "10", "100", "1000", "Message size (kB, log scale)")
	if _, err := c.PNG(6*vg.Inch, 4*vg.Inch, 72); err != nil {
		t.Fatal(err)
	}
	// Nothing above 0: nothing to draw, an error rather than a panic.
	bad := Chart{XLog: true, Series: []Series{{Name: "a", X: []float64{0, -1}, Median: []float64{1, 2}}}}
	if _, err := bad.SVG(6*vg.Inch, 4*vg.Inch); err == nil {
		t.Error("a log axis with nothing above 0 drew")
	}
	fixed := Chart{XLog: true, XMin: ptr(0.0), Series: []Series{{Name: "a", X: []float64{1, 2}, Median: []float64{1, 2}}}}
	if _, err := fixed.SVG(6*vg.Inch, 4*vg.Inch); err == nil || !strings.Contains(err.Error(), "log axis") {
		t.Errorf("XMin 0 on a log axis: %v, want an error naming the log axis", err)
	}
}
