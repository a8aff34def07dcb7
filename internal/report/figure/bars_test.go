package figure

import (
	"bytes"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// modeBars is a datagram-size sweep of five network modes: mean throughput
// with standard deviations.
func modeBars() BarChart {
	c := BarChart{
		Title: "UDP throughput", Subtitle: "bigger is better",
		XLabel: "Datagram size (B)", YLabel: "Throughput (Gbit/s)",
		Groups: []string{"1000", "1200", "1400"},
	}
	for i, name := range []string{"bare", "bridge", "host", "macvlan", "overlay"} {
		f := []float64{1, 0.7, 0.97, 0.93, 0.45}[i]
		s := BarSeries{Name: name}
		for g := range c.Groups {
			m := (4 + 1.5*float64(g)) * f
			s.Mean = append(s.Mean, m)
			s.SD = append(s.SD, m*(0.04+0.03*float64((i+g)%3)))
		}
		c.Series = append(c.Series, s)
	}
	return c
}

func TestBarChartSVGAndPNG(t *testing.T) {
	for name, tc := range map[string]struct {
		c     BarChart
		texts []string
	}{
		"groups": {modeBars(), []string{"UDP throughput", "bigger is better", "Datagram size (B)", "Throughput (Gbit/s)",
			"1000", "1200", "1400", "bare", "bridge", "host", "macvlan", "overlay", barNote}},
		"single unnamed group": {BarChart{
			YLabel: "Loss", YPercent: true, Groups: []string{""},
			Series: []BarSeries{
				{Name: "bare", Mean: []float64{0.01}, SD: []float64{0.005}},
				{Name: "overlay-encrypted", Mean: []float64{0.3}, SD: []float64{0.1}},
				{Name: "ipvlan l3 mode", Mean: []float64{0.2}},
			},
		}, []string{"Loss", "bare", "overlay-", "encrypted", "%"}},
		"legend right": {func() BarChart { c := modeBars(); c.Legend = LegendRight; return c }(), []string{"macvlan"}},
		"legend below": {func() BarChart { c := modeBars(); c.Legend = LegendBelow; return c }(), []string{"macvlan"}},
		"legend none":  {func() BarChart { c := modeBars(); c.Legend = LegendNone; return c }(), []string{"1400"}},
		"no SD":        {func() BarChart { c := modeBars(); c.Series[0].SD = nil; return c }(), []string{"bare"}},
		"one series":   {BarChart{Groups: []string{"a", "b"}, Series: []BarSeries{{Name: "x", Mean: []float64{1, 2}, SD: []float64{0.1, 0}}}}, []string{"a", "b", "x"}},
		"big font, ids": {func() BarChart {
			c := modeBars()
			c.FontSize, c.IDPrefix, c.ColourIndex = vg.Points(12), "bars-", 3
			return c
		}(), []string{"overlay"}},
		"many long groups": {BarChart{
			Groups: []string{"small messages", "medium messages", "large messages", "huge-messages/jumbo", "x", "y", "z", "w"},
			Series: []BarSeries{{Name: "a", Mean: []float64{1, 2, 3, 4, 5, 6, 7, 8}}, {Name: "b", Mean: []float64{8, 7, 6, 5, 4, 3, 2, 1}}},
		}, []string{"small", "jumbo"}},
	} {
		t.Run(name, func(t *testing.T) {
			svg, err := tc.c.SVG(6*vg.Inch, 4*vg.Inch)
			if err != nil {
				t.Fatal(err)
			}
			checkSVG(t, svg, tc.texts...)
			b, err := tc.c.PNG(6*vg.Inch, 4*vg.Inch, 100)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if got := img.Bounds().Size(); got.X != 600 || got.Y != 400 {
				t.Errorf("PNG is %v, want 600×400", got)
			}
		})
	}
}

func TestBarChartDeterministic(t *testing.T) {
	for _, f := range []struct {
		name string
		fn   func(BarChart) ([]byte, error)
	}{
		{"SVG", func(c BarChart) ([]byte, error) { return c.SVG(6*vg.Inch, 4*vg.Inch) }},
		{"PNG", func(c BarChart) ([]byte, error) { return c.PNG(4*vg.Inch, 3*vg.Inch, 96) }},
	} {
		a, err := f.fn(modeBars())
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.fn(modeBars())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s output differs between runs", f.name)
		}
	}
}

func TestBarChartErrors(t *testing.T) {
	w, h := 6*vg.Inch, 4*vg.Inch
	one := []BarSeries{{Name: "a", Mean: []float64{1}}}
	for _, tc := range []struct {
		name string
		c    BarChart
		w, h vg.Length
		dpi  int
		want string
	}{
		{"no groups", BarChart{Series: one}, w, h, 72, "no groups"},
		{"no series", BarChart{Groups: []string{"1"}}, w, h, 72, "no series"},
		{"short mean", BarChart{Groups: []string{"1", "2"}, Series: []BarSeries{{Name: "a", Mean: []float64{1}}}}, w, h, 72, `"a": 1 means for 2 groups`},
		{"long mean", BarChart{Groups: []string{"1"}, Series: []BarSeries{{Name: "a", Mean: []float64{1, 2}}}}, w, h, 72, "2 means for 1 groups"},
		{"short SD", BarChart{Groups: []string{"1", "2"}, Series: []BarSeries{{Name: "b", Mean: []float64{1, 2}, SD: []float64{1}}}}, w, h, 72, `"b": 1 standard deviations for 2 groups`},
		{"short base", BarChart{Groups: []string{"1", "2"}, Series: []BarSeries{{Name: "w", Mean: []float64{1, 2}, Base: []float64{0}}}}, w, h, 72, `"w": 1 bases for 2 groups`},
		{"empty SD", BarChart{Groups: []string{"1"}, Series: []BarSeries{{Name: "b", Mean: []float64{1}, SD: []float64{}}}}, w, h, 72, "0 standard deviations"},
		{"too small", BarChart{Groups: []string{"1"}, Series: one}, vg.Points(30), vg.Points(30), 72, "too small"},
		{"zero size", BarChart{Groups: []string{"1"}, Series: one}, 0, h, 72, "must be > 0"},
		{"NaN size", BarChart{Groups: []string{"1"}, Series: one}, w, vg.Length(math.NaN()), 72, "must be > 0"},
		{"dpi 0", BarChart{Groups: []string{"1"}, Series: one}, w, h, 0, "dpi"},
		{"huge PNG", BarChart{Groups: []string{"1"}, Series: one}, 100 * vg.Inch, h, 300, "pixels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errPNG := tc.c.PNG(tc.w, tc.h, tc.dpi)
			if errPNG == nil || !strings.HasPrefix(errPNG.Error(), "figure: ") || !strings.Contains(errPNG.Error(), tc.want) {
				t.Errorf("PNG error %v, want one containing %q", errPNG, tc.want)
			}
			if tc.dpi <= 0 || tc.name == "huge PNG" {
				return // SVG has no dpi
			}
			_, errSVG := tc.c.SVG(tc.w, tc.h)
			if errSVG == nil || !strings.HasPrefix(errSVG.Error(), "figure: ") || !strings.Contains(errSVG.Error(), tc.want) {
				t.Errorf("SVG error %v, want one containing %q", errSVG, tc.want)
			}
		})
	}
}

// TestBarChartEdgeCases renders unusual but valid bar charts without error
// and checks the y range chosen for them.
func TestBarChartEdgeCases(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name       string
		c          BarChart
		ymin, ymax float64 // expected range of yRange (ymax: at least)
	}{
		{"all NaN", BarChart{Groups: []string{"1", "2"}, Series: []BarSeries{{Name: "a", Mean: []float64{nan(), nan()}, SD: []float64{1, 1}}}}, 0, 1},
		{"all Inf", BarChart{Groups: []string{"1"}, Series: []BarSeries{{Name: "a", Mean: []float64{inf}, SD: []float64{inf}}}}, 0, 1},
		{"some NaN", BarChart{Groups: []string{"1", "2", "3"}, Series: []BarSeries{
			{Name: "a", Mean: []float64{1, nan(), 3}, SD: []float64{nan(), 1, 0.5}},
			{Name: "b", Mean: []float64{nan(), 2, -inf}, SD: []float64{0.2, inf, 0.1}},
		}}, 0, 3.5},
		{"all zero", BarChart{Groups: []string{"1"}, Series: []BarSeries{{Name: "a", Mean: []float64{0}, SD: []float64{0}}}}, 0, 1},
		{"negative", BarChart{Groups: []string{"1", "2"}, Series: []BarSeries{
			{Name: "a", Mean: []float64{-2, 3}, SD: []float64{0.5, 0.5}},
			{Name: "b", Mean: []float64{-1, -4}, SD: []float64{1, 1}},
		}}, -5, 3.5},
		{"all negative", BarChart{Groups: []string{"1"}, Series: []BarSeries{{Name: "a", Mean: []float64{-0.3}, SD: []float64{0.1}}}}, -0.4, 0},
		{"negative SD", BarChart{Groups: []string{"1"}, Series: []BarSeries{{Name: "a", Mean: []float64{2}, SD: []float64{-1}}}}, 0, 3},
		{"SD past 0", BarChart{Groups: []string{"1"}, Series: []BarSeries{{Name: "a", Mean: []float64{1}, SD: []float64{3}}}}, 0, 4},
		{"tiny", BarChart{Groups: []string{"1"}, Series: []BarSeries{{Name: "a", Mean: []float64{1e-9}, SD: []float64{3e-10}}}}, 0, 1.3e-9},
		{"huge", BarChart{Groups: []string{"1"}, Series: []BarSeries{{Name: "a", Mean: []float64{1e12}, SD: []float64{3e11}}}}, 0, 1.3e12},
		{"unnamed series", BarChart{Groups: []string{"1", "2"}, Series: []BarSeries{{Mean: []float64{1, 2}}, {Mean: []float64{2, 1}}}}, 0, 2},
		{"many series", BarChart{Groups: []string{"1"}, Series: func() []BarSeries {
			var s []BarSeries
			for i := range 20 {
				s = append(s, BarSeries{Name: strings.Repeat("m", i+1), Mean: []float64{float64(i)}, SD: []float64{1}})
			}
			return s
		}()}, 0, 20},
		{"long title", BarChart{Title: strings.Repeat("A very long title ", 10), Groups: []string{"x"}, Series: []BarSeries{{Name: "a", Mean: []float64{1}}}}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc, err := tc.c.prepare()
			if err != nil {
				t.Fatal(err)
			}
			for _, ylen := range []vg.Length{60, 200, 600} {
				lo, hi, step := pc.yRange(ylen)
				if !(step > 0) || !finite(lo) || !finite(hi) || hi <= lo {
					t.Fatalf("ylen %v: y range [%g, %g] step %g", ylen, lo, hi, step)
				}
				if lo != tc.ymin && !(tc.ymin < 0 && lo <= tc.ymin) {
					t.Errorf("ylen %v: y min %g, want %g", ylen, lo, tc.ymin)
				}
				if hi < tc.ymax*(1-1e-12) {
					t.Errorf("ylen %v: y max %g, want ≥ %g", ylen, hi, tc.ymax)
				}
			}
			for _, size := range [][2]vg.Length{{5 * vg.Inch, 3 * vg.Inch}, {vg.Inch, vg.Points(54)}} {
				if _, err := tc.c.SVG(size[0], size[1]); err != nil {
					t.Errorf("SVG %v: %v", size, err)
				}
				if _, err := tc.c.PNG(size[0], size[1], 72); err != nil {
					t.Errorf("PNG %v: %v", size, err)
				}
			}
		})
	}
}

// TestBarChartYRange checks that the y axis of the laid-out plot holds the
// tallest bar's error bar (with a little room) and starts at 0.
func TestBarChartYRange(t *testing.T) {
	c := modeBars()
	top := math.Inf(-1)
	for _, s := range c.Series {
		for g := range s.Mean {
			top = math.Max(top, s.Mean[g]+s.SD[g])
		}
	}
	pc, err := c.prepare()
	if err != nil {
		t.Fatal(err)
	}
	if pc.hi != top || pc.lo != 0 {
		t.Errorf("data range [%g, %g], want [0, %g]", pc.lo, pc.hi, top)
	}
	for _, size := range [][2]vg.Length{{6 * vg.Inch, 4 * vg.Inch}, {3 * vg.Inch, 2 * vg.Inch}, {12 * vg.Inch, 9 * vg.Inch}} {
		cv := vgimg.New(size[0], size[1])
		p, dc := pc.layout(draw.New(cv))
		if p.Y.Min != 0 {
			t.Errorf("%v: y starts at %g", size, p.Y.Min)
		}
		if p.Y.Max < top+barEdgeRoom*(p.Y.Max-p.Y.Min)*0.999 {
			t.Errorf("%v: y max %g too close to the tallest error bar %g", size, p.Y.Max, top)
		}
		// Every bar with its error bar is inside the data area, and the
		// bars of a group do not overlap.
		for g := range c.Groups {
			var prevMax vg.Length = -1e9
			for i := range c.Series {
				r, ylo, yhi, ok := pc.barRect(p, dc, g, i)
				if !ok {
					t.Fatalf("bar %d/%d missing", g, i)
				}
				if ylo < dc.Min.Y || yhi > dc.Max.Y || r.Min.X < dc.Min.X || r.Max.X > dc.Max.X {
					t.Errorf("%v: bar %d/%d %v outside the data area %v", size, g, i, r, dc.Rectangle)
				}
				if r.Min.X < prevMax {
					t.Errorf("%v: bar %d/%d overlaps its left neighbour", size, g, i)
				}
				prevMax = r.Max.X
			}
		}
	}
}

func TestBarChartNegativeBars(t *testing.T) {
	c := BarChart{Groups: []string{"a", "b"}, Series: []BarSeries{{Name: "s", Mean: []float64{-2, 3}, SD: []float64{0.5, 0.5}}}}
	pc, err := c.prepare()
	if err != nil {
		t.Fatal(err)
	}
	cv := vgimg.New(5*vg.Inch, 3*vg.Inch)
	p, dc := pc.layout(draw.New(cv))
	if p.Y.Min > -2.5 || p.Y.Max < 3.5 {
		t.Fatalf("y range [%g, %g] does not hold [-2.5, 3.5]", p.Y.Min, p.Y.Max)
	}
	_, trY := p.Transforms(&dc)
	zero := trY(0)
	neg, _, _, _ := pc.barRect(p, dc, 0, 0)
	pos, _, _, _ := pc.barRect(p, dc, 1, 0)
	if math.Abs(float64(neg.Max.Y-zero)) > 1e-6 || math.Abs(float64(neg.Min.Y-trY(-2))) > 1e-6 {
		t.Errorf("negative bar spans %v..%v, want %v..%v", neg.Min.Y, neg.Max.Y, trY(-2), zero)
	}
	if math.Abs(float64(pos.Min.Y-zero)) > 1e-6 || math.Abs(float64(pos.Max.Y-trY(3))) > 1e-6 {
		t.Errorf("positive bar spans %v..%v, want %v..%v", pos.Min.Y, pos.Max.Y, zero, trY(3))
	}
}

// TestBarChartFloatingBars: a waterfall's bar runs from its base to its
// mean, up or down, and the y range holds both ends and the error bar.
func TestBarChartFloatingBars(t *testing.T) {
	c := BarChart{Groups: []string{""}, Series: []BarSeries{
		{Name: "bare", Mean: []float64{50}},
		{Name: "veth", Mean: []float64{60}, SD: []float64{4}, Base: []float64{50}},
		{Name: "faster", Mean: []float64{55}, SD: []float64{2}, Base: []float64{60}},
		{Name: "NaN base", Mean: []float64{20}, Base: []float64{math.NaN()}},
	}}
	pc, err := c.prepare()
	if err != nil {
		t.Fatal(err)
	}
	if pc.lo != 0 || pc.hi != 64 {
		t.Errorf("data range [%g, %g], want [0, 64]", pc.lo, pc.hi)
	}
	p, dc := pc.layout(draw.New(vgimg.New(5*vg.Inch, 3*vg.Inch)))
	_, trY := p.Transforms(&dc)
	for i, want := range [][2]float64{{0, 50}, {50, 60}, {55, 60}, {0, 20}} {
		r, _, _, _ := pc.barRect(p, dc, 0, i)
		if math.Abs(float64(r.Min.Y-trY(want[0]))) > 1e-6 || math.Abs(float64(r.Max.Y-trY(want[1]))) > 1e-6 {
			t.Errorf("bar %s spans %v..%v, want %v..%v", c.Series[i].Name, r.Min.Y, r.Max.Y, trY(want[0]), trY(want[1]))
		}
	}
}

func TestBarChartColours(t *testing.T) {
	c := modeBars()
	c.ColourIndex = 2
	c.Series[1].Color = color.RGBA{1, 2, 3, 255}
	pc, err := c.prepare()
	if err != nil {
		t.Fatal(err)
	}
	if pc.series[0].col != SeriesColor(2) || pc.series[1].col != (color.NRGBA{1, 2, 3, 255}) || pc.series[2].col != SeriesColor(4) {
		t.Errorf("colours %v, %v, %v", pc.series[0].col, pc.series[1].col, pc.series[2].col)
	}
	if f := barFill(color.NRGBA{0, 0, 0, 255}); f.A != 255 || f.R != 51 {
		t.Errorf("barFill(black) = %v", f)
	}
}

func TestBarLegendPlacement(t *testing.T) {
	// Tall bars everywhere: no inside corner is free even with headroom,
	// so the narrow legend goes to the right.
	full := BarChart{Groups: []string{"1", "2"}, Series: []BarSeries{
		{Name: "a", Mean: []float64{10, 10}, SD: []float64{0.1, 0.1}},
		{Name: "b", Mean: []float64{10, 10}},
	}}
	pc, _ := full.prepare()
	cv := vgimg.New(6*vg.Inch, 4*vg.Inch)
	p, dc := pc.layout(draw.New(cv))
	if _, ok := pc.autoPlace(p, dc, pc.legend().size); ok {
		t.Error("a corner over full-height bars was called free")
	}
	// A short first group leaves the top-left corner free.
	low := full
	low.Series = []BarSeries{{Name: "a", Mean: []float64{1, 10}}, {Name: "b", Mean: []float64{1, 10}}}
	pc, _ = low.prepare()
	p, dc = pc.layout(draw.New(cv))
	if place, ok := pc.autoPlace(p, dc, pc.legend().size); !ok || place != LegendTopLeft {
		t.Errorf("autoPlace = %v, %v; want top-left", place, ok)
	}
}

func TestWrapLabel(t *testing.T) {
	sty := textStyle(vg.Points(9), false, black)
	for _, tc := range []struct {
		in   string
		room vg.Length
		want string
	}{
		{"bare", 100, "bare"},
		{"overlay-encrypted", 50, "overlay-\nencrypted"},
		{"ipvlan l3 mode", 40, "ipvlan l3\nmode"},
		{"ipvlan l3 mode", 25, "ipvlan\nl3\nmode"},
		{"averyveryverylongword", 10, "averyveryverylongword"},
		{"a/b_c", 5, "a/\nb_\nc"},
	} {
		if got := wrapLabel(tc.in, sty, tc.room); got != tc.want {
			t.Errorf("wrapLabel(%q, %v) = %q, want %q", tc.in, tc.room, got, tc.want)
		}
	}
	labels, s := fitLabels([]string{"averyveryverylongword"}, sty, 30)
	if labels[0] != "averyveryverylongword" || s.Font.Size < barMinFont || s.Font.Size >= sty.Font.Size {
		t.Errorf("fitLabels shrank to %v: %q", s.Font.Size, labels)
	}
}

// TestWriteBarExamples writes example bar charts to $FIGURE_EXAMPLE_DIR
// for a person to look at; it is skipped when the variable is unset.
func TestWriteBarExamples(t *testing.T) {
	dir := os.Getenv("FIGURE_EXAMPLE_DIR")
	if dir == "" {
		t.Skip("FIGURE_EXAMPLE_DIR not set")
	}
	single := BarChart{
		Title: "UDP loss", Subtitle: "smaller is better", YLabel: "Datagrams lost", YPercent: true,
		Groups: []string{""},
	}
	for i, name := range []string{"bare", "bridge", "host", "macvlan", "overlay-encrypted"} {
		m := []float64{0.002, 0.03, 0.004, 0.006, 0.12}[i]
		single.Series = append(single.Series, BarSeries{Name: name, Mean: []float64{m}, SD: []float64{m * 0.3}})
	}
	neg := BarChart{
		Title: "Change to the baseline", XLabel: "Datagram size (B)", YLabel: "Change", YPercent: true,
		Groups: []string{"1000", "1200", "1400"},
		Series: []BarSeries{
			{Name: "bridge", Mean: []float64{-0.1, 0.05, nan()}, SD: []float64{0.03, 0.02, 0.01}},
			{Name: "overlay", Mean: []float64{-0.4, -0.35, -0.3}, SD: []float64{0.05, 0.05, 0.08}},
		},
		ColourIndex: 1,
	}
	for name, c := range map[string]BarChart{"bars-sample": modeBars(), "bars-single": single, "bars-negative": neg} {
		b, err := c.PNG(6*vg.Inch, 4*vg.Inch, 150)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := c.SVG(6*vg.Inch, 4*vg.Inch)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".svg"), s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
