package figure

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
)

// window is the TCP receive window of the seed papers in kB.
const window = 83780.0 / 1000

// synth makes a ppbench-like transfer series: n raw points over 0..500 kB,
// a break above 3 receive windows, binned into 100 bins with median and
// 25/75 and 5/95 percentile bands.
func synth(name string, factor float64, seed uint64, n int) Series {
	rng := rand.New(rand.NewPCG(seed, 7))
	px := make([]float64, n)
	py := make([]float64, n)
	for i := range px {
		m := rng.Float64() * 500
		rate := 80 * m / (m + 40) * factor
		if m > 3*window {
			rate *= 0.55
		}
		rate *= math.Exp(rng.NormFloat64() * 0.18)
		if rng.Float64() < 0.01 {
			rate *= 3 // outliers
		}
		px[i], py[i] = m, rate
	}
	const bins = 100
	per := make([][]float64, bins)
	for i, m := range px {
		b := min(int(m/5), bins-1)
		per[b] = append(per[b], py[i])
	}
	s := Series{Name: name, PX: px, PY: py,
		X: make([]float64, bins), Median: make([]float64, bins),
		Band50: &Band{Lo: make([]float64, bins), Hi: make([]float64, bins)},
		Band90: &Band{Lo: make([]float64, bins), Hi: make([]float64, bins)},
	}
	for b := range bins {
		s.X[b] = float64(b)*5 + 2.5
		v := per[b]
		if len(v) < 3 {
			s.Median[b], s.Band50.Lo[b], s.Band50.Hi[b], s.Band90.Lo[b], s.Band90.Hi[b] = nan(), nan(), nan(), nan(), nan()
			continue
		}
		sort.Float64s(v)
		s.Median[b] = percentile(v, 0.5)
		s.Band50.Lo[b], s.Band50.Hi[b] = percentile(v, 0.25), percentile(v, 0.75)
		s.Band90.Lo[b], s.Band90.Hi[b] = percentile(v, 0.05), percentile(v, 0.95)
	}
	return s
}

func nan() float64 { return math.NaN() }

// gap puts NaN into bins a..b-1 of a series.
func gap(s Series, a, b int) Series {
	cp := func(v []float64) []float64 { return append([]float64(nil), v...) }
	s.Median = cp(s.Median)
	s.Band50 = &Band{Lo: cp(s.Band50.Lo), Hi: cp(s.Band50.Hi)}
	s.Band90 = &Band{Lo: cp(s.Band90.Lo), Hi: cp(s.Band90.Hi)}
	for i := a; i < b; i++ {
		s.Median[i], s.Band50.Lo[i], s.Band50.Hi[i], s.Band90.Lo[i], s.Band90.Hi[i] = nan(), nan(), nan(), nan(), nan()
	}
	return s
}

func windows() []float64 {
	var v []float64
	for k := 1; float64(k)*window < 500; k++ {
		v = append(v, float64(k)*window)
	}
	return v
}

func twoSeries() Chart {
	return Chart{
		Title:    "Data transfer rates",
		Subtitle: "bigger is better",
		XLabel:   "Message size (kB)",
		YLabel:   "Transfer rate (MB/s)",
		Series: []Series{
			gap(synth("bare", 1, 1, 3000), 40, 44),
			synth("docker", 0.8, 2, 3000),
		},
		VLines: windows(),
	}
}

func lossChart() Chart {
	a, b := synth("bare", 1, 1, 2000), synth("weave", 0.6, 3, 2000)
	ratio := make([]float64, len(a.X))
	one := make([]float64, len(a.X))
	for i := range ratio {
		ratio[i] = b.Median[i] / a.Median[i]
		one[i] = 1
	}
	h := 1.0
	return Chart{
		Title: "Data transfer in relative comparison", Subtitle: "bigger is better",
		XLabel: "Message size (kB)", YLabel: "Ratio to bare",
		Series: []Series{{Name: "weave / bare", X: a.X, Median: ratio, Color: SeriesColor(1)}},
		HLine:  &h, HLineLabel: "reference: bare", YPercent: true, VLines: windows(),
	}
}

func TestSVGAndPNG(t *testing.T) {
	c := twoSeries()
	h := 40.0
	c.HLine = &h
	c.HLineLabel = "40 MB/s"

	svg, err := c.SVG(6*vg.Inch, 4*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg, c.Title, c.Subtitle, c.XLabel, c.YLabel, "bare", "docker", DefaultVLineLabel, "40 MB/s")

	b, err := c.PNG(6*vg.Inch, 4*vg.Inch, 100)
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
}

// checkSVG parses the SVG as XML and checks texts, ids and references.
func checkSVG(t *testing.T, svg []byte, texts ...string) {
	t.Helper()
	if !bytes.HasPrefix(svg, []byte("<svg")) {
		t.Errorf("SVG starts with %q", svg[:min(len(svg), 20)])
	}
	d := xml.NewDecoder(bytes.NewReader(svg))
	var all strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.CharData:
			all.Write(tok)
			all.WriteByte('\n')
		case xml.StartElement:
			for _, a := range tok.Attr {
				if a.Name.Local == "id" {
					t.Errorf("SVG has an id attribute %q: ids would clash when inlined", a.Value)
				}
			}
		}
	}
	for _, s := range texts {
		if !strings.Contains(all.String(), s) {
			t.Errorf("SVG text lacks %q", s)
		}
	}
	rest := bytes.Replace(svg, []byte(`xmlns="http://www.w3.org/2000/svg"`), nil, 1)
	if bytes.Contains(rest, []byte("http")) || bytes.Contains(rest, []byte("url(")) {
		t.Error("SVG refers to something outside itself")
	}
}

func TestLossChart(t *testing.T) {
	c := lossChart()
	svg, err := c.SVG(6*vg.Inch, 4*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg, "100 %", "reference: bare", "weave / bare")
	if _, err := c.PNG(5*vg.Inch, 3*vg.Inch, 150); err != nil {
		t.Fatal(err)
	}
}

func TestDeterministic(t *testing.T) {
	c := twoSeries()
	a1, err := c.SVG(6*vg.Inch, 4*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := twoSeries().SVG(6*vg.Inch, 4*vg.Inch)
	if !bytes.Equal(a1, a2) {
		t.Error("SVG output differs between runs")
	}
	p1, err := c.PNG(4*vg.Inch, 3*vg.Inch, 96)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := twoSeries().PNG(4*vg.Inch, 3*vg.Inch, 96)
	if !bytes.Equal(p1, p2) {
		t.Error("PNG output differs between runs")
	}
}

func TestThin(t *testing.T) {
	px := make([]float64, 10001)
	py := make([]float64, 10001)
	for i := range px {
		px[i], py[i] = float64(i), float64(-i)
	}
	for _, max := range []int{1, 7, 4000, 10000} {
		x, y := thin(px, py, max)
		if len(x) > max || len(x) != len(y) {
			t.Errorf("thin to %d kept %d/%d", max, len(x), len(y))
		}
		for i := range x {
			if y[i] != -x[i] || (i > 0 && x[i] <= x[i-1]) {
				t.Fatalf("thin to %d: bad point %d: (%v, %v)", max, i, x[i], y[i])
			}
		}
	}
	if x, _ := thin(px[:5], py[:5], 10); len(x) != 5 {
		t.Errorf("thin of fewer points than the cap kept %d", len(x))
	}

	c := Chart{Series: []Series{{Name: "a", PX: px, PY: py}}, MaxPoints: 100}
	pc, err := c.prepare()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pc.series[0].px); n != 100 {
		t.Errorf("MaxPoints 100 kept %d points", n)
	}
	c.MaxPoints = 0
	pc, _ = c.prepare()
	if n := len(pc.series[0].px); n != DefaultMaxPoints {
		t.Errorf("default cap kept %d points", n)
	}
}

func TestErrors(t *testing.T) {
	w, h := 6*vg.Inch, 4*vg.Inch
	for name, c := range map[string]Chart{
		"empty":        {Title: "nothing"},
		"nan only":     {Series: []Series{{Name: "a", X: []float64{1, 2}, Median: []float64{nan(), nan()}}}},
		"bad median":   {Series: []Series{{Name: "a", X: []float64{1, 2}, Median: []float64{1}}}},
		"bad band":     {Series: []Series{{Name: "a", X: []float64{1, 2}, Median: []float64{1, 2}, Band50: &Band{Lo: []float64{1}, Hi: []float64{1, 2}}}}},
		"bad points":   {Series: []Series{{Name: "a", PX: []float64{1, 2}, PY: []float64{1}}}},
		"empty yrange": {Series: []Series{{Name: "a", X: []float64{1, 2}, Median: []float64{1, 2}}}, YMin: ptr(3.0), YMax: ptr(1.0)},
	} {
		if _, err := c.SVG(w, h); err == nil {
			t.Errorf("%s: SVG gave no error", name)
		}
		if _, err := c.PNG(w, h, 72); err == nil {
			t.Errorf("%s: PNG gave no error", name)
		}
	}
	c := twoSeries()
	if _, err := c.PNG(w, h, 0); err == nil {
		t.Error("dpi 0 gave no error")
	}
	if _, err := c.SVG(0, h); err == nil {
		t.Error("width 0 gave no error")
	}
}

func ptr[T any](v T) *T { return &v }

// TestEdgeCases renders unusual but valid charts without error.
func TestEdgeCases(t *testing.T) {
	for name, c := range map[string]Chart{
		"points only":   {Series: []Series{{PX: []float64{1, 2, 3}, PY: []float64{3, 1, 2}}}},
		"single value":  {Series: []Series{{Name: "a", X: []float64{5}, Median: []float64{2}}}},
		"constant":      {Series: []Series{{Name: "a", X: []float64{0, 0}, Median: []float64{0, 0}}}},
		"negative":      {Series: []Series{{Name: "a", X: []float64{-3, 4, 5}, Median: []float64{-2, 0.001, 7}}}},
		"tiny numbers":  {Series: []Series{{Name: "a", X: []float64{0, 1e-6}, Median: []float64{1e-9, 3e-9}}}},
		"huge numbers":  {Series: []Series{{Name: "a", X: []float64{0, 1e9}, Median: []float64{1e12, 3e12}}}},
		"isolated bins": {Series: []Series{{Name: "a", X: []float64{1, 2, 3}, Median: []float64{1, nan(), 3}, Band90: &Band{Lo: []float64{0, nan(), 2}, Hi: []float64{2, nan(), 4}}}}},
		"fixed ranges":  {Series: []Series{synth("a", 1, 1, 500)}, XMin: ptr(100.0), XMax: ptr(300.0), YMin: ptr(10.0), YMax: ptr(30.0)},
		"legend right":  {Series: []Series{synth("a", 1, 1, 500)}, Legend: LegendRight},
		"no legend":     {Series: []Series{synth("a", 1, 1, 500)}, Legend: LegendNone},
		"legend below":  {Series: []Series{synth("a", 1, 1, 500), synth("b", 1, 2, 500)}, VLines: []float64{100}, Legend: LegendBelow},
		"long title":    {Title: strings.Repeat("A very long title ", 10), Series: []Series{synth("a", 1, 1, 100)}},
		"infinite":      {Series: []Series{{Name: "a", X: []float64{1, 2, math.Inf(1)}, Median: []float64{1, math.Inf(1), 3}}}},
	} {
		if _, err := c.SVG(5*vg.Inch, 3*vg.Inch); err != nil {
			t.Errorf("%s: SVG: %v", name, err)
		}
		if _, err := c.PNG(5*vg.Inch, 3*vg.Inch, 72); err != nil {
			t.Errorf("%s: PNG: %v", name, err)
		}
	}
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		v, step float64
		pct     bool
		want    string
	}{
		{0, 50, false, "0"}, {150, 50, false, "150"}, {0.30000000000000004, 0.1, false, "0.3"},
		{7.5, 2.5, false, "7.5"}, {1, 0.2, true, "100 %"}, {0.25, 0.25, true, "25 %"},
		{-0.0000001, 0.5, false, "0.0"}, {2e6, 1e6, false, "2000000"},
	} {
		if got := tickLabel(tc.v, tc.step, tc.pct); got != tc.want {
			t.Errorf("tickLabel(%v, %v, %v) = %q, want %q", tc.v, tc.step, tc.pct, got, tc.want)
		}
	}
	ticks := niceTicks{step: 100, minor: 2}.Ticks(0, 500)
	var labels []string
	for _, tk := range ticks {
		if !tk.IsMinor() {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, ","); got != "0,100,200,300,400,500" || len(ticks) != 11 {
		t.Errorf("ticks 0..500 step 100: %s (%d ticks)", got, len(ticks))
	}
}

// TestTickLabelsDoNotOverlap checks the chosen x steps leave room between
// labels on narrow and wide charts.
func TestTickLabelsDoNotOverlap(t *testing.T) {
	sty := textStyle(vg.Points(9), false, black)
	for _, tc := range []struct {
		min, max float64
		length   vg.Length
	}{{0, 500, 150}, {0, 500, 400}, {0, 123456, 200}, {0, 0.0037, 180}, {-20, 20, 300}} {
		step := chooseStep(tc.min, tc.max, tc.length, true, false, sty)
		ticks := niceTicks{step: step}.Ticks(tc.min, tc.max)
		scale := tc.length / vg.Length(tc.max-tc.min)
		for i := 1; i < len(ticks); i++ {
			a, b := ticks[i-1], ticks[i]
			gap := vg.Length(b.Value-a.Value)*scale - (sty.Width(a.Label)+sty.Width(b.Label))/2
			if gap < vg.Points(4) {
				t.Errorf("%v..%v on %v pt: labels %q and %q overlap (gap %v)", tc.min, tc.max, tc.length, a.Label, b.Label, gap)
			}
		}
		if len(ticks) < 2 {
			t.Errorf("%v..%v on %v pt: only %d ticks", tc.min, tc.max, tc.length, len(ticks))
		}
	}
}

func TestFontFaceCSS(t *testing.T) {
	css := fontFaceCSS()
	if strings.Count(css, "@font-face") != 2 || strings.Contains(css, "http") {
		t.Errorf("fontFaceCSS: %d rules, %d bytes", strings.Count(css, "@font-face"), len(css))
	}
	c := twoSeries()
	c.EmbedFonts = true
	svg, err := c.SVG(6*vg.Inch, 4*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte("@font-face")) || bytes.Contains(bytes.Replace(svg, []byte(`xmlns="http://www.w3.org/2000/svg"`), nil, 1), []byte("http")) {
		t.Error("embedded-font SVG lacks @font-face or refers outside")
	}
}

func fiveSeries() Chart {
	c := Chart{
		Title: "Data transfer rates", Subtitle: "bigger is better",
		XLabel: "Message size (kB)", YLabel: "Transfer rate (MB/s)",
		VLines: windows(),
	}
	for i, f := range []float64{1, 0.9, 0.75, 0.6, 0.45} {
		c.Series = append(c.Series, synth([]string{"bare", "host", "bridge", "overlay", "overlay-encrypted"}[i], f, uint64(i+1), 4000))
	}
	return c
}

func TestPerformance(t *testing.T) {
	c := fiveSeries()
	for _, format := range []string{"svg", "png"} {
		start := time.Now()
		var b []byte
		var err error
		if format == "svg" {
			b, err = c.SVG(6*vg.Inch, 4*vg.Inch)
		} else {
			b, err = c.PNG(6*vg.Inch, 4*vg.Inch, 150)
		}
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		t.Logf("%s: 5 series × 4000 points + 100 bins: %v, %d bytes", format, d, len(b))
		if d > time.Second && !raceEnabled {
			t.Errorf("%s took %v", format, d)
		}
	}
}

func BenchmarkPNG5x4000(b *testing.B) {
	c := fiveSeries()
	for b.Loop() {
		if _, err := c.PNG(6*vg.Inch, 4*vg.Inch, 150); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSVG5x4000(b *testing.B) {
	c := fiveSeries()
	for b.Loop() {
		if _, err := c.SVG(6*vg.Inch, 4*vg.Inch); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteExamples writes example figures to $FIGURE_EXAMPLE_DIR for a
// person to look at; it is skipped when the variable is unset.
func TestWriteExamples(t *testing.T) {
	dir := os.Getenv("FIGURE_EXAMPLE_DIR")
	if dir == "" {
		t.Skip("FIGURE_EXAMPLE_DIR not set")
	}
	one := Chart{
		Title: "Data transfer rates", Subtitle: "bigger is better",
		XLabel: "Message size (kB)", YLabel: "Transfer rate (MB/s)",
		Series: []Series{synth("bare", 1, 1, 4000)}, VLines: windows(),
	}
	lines := fiveSeries()
	for i := range lines.Series {
		lines.Series[i].PX, lines.Series[i].PY = nil, nil
	}
	for name, c := range map[string]Chart{
		"figure-example": twoSeries(), "figure-one": one, "figure-five": fiveSeries(),
		"figure-five-lines": lines, "figure-loss": lossChart(),
	} {
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

// TestConcurrent renders from several goroutines (the report may render
// figures in parallel); run with -race.
func TestConcurrent(t *testing.T) {
	want, err := twoSeries().SVG(5*vg.Inch, 3*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			got, err := twoSeries().SVG(5*vg.Inch, 3*vg.Inch)
			if err == nil && !bytes.Equal(got, want) {
				err = errors.New("concurrent SVG differs")
			}
			if err == nil {
				_, err = lossChart().PNG(4*vg.Inch, 3*vg.Inch, 72)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestColoursAndIDs(t *testing.T) {
	c := Chart{Series: []Series{{Name: "a", X: []float64{1, 2}, Median: []float64{1, 2}}, {Name: "b", X: []float64{1, 2}, Median: []float64{2, 1}, Color: color.RGBA{1, 2, 3, 255}}}, ColourIndex: 2}
	pc, err := c.prepare()
	if err != nil {
		t.Fatal(err)
	}
	if pc.series[0].col != SeriesColor(2) || pc.series[1].col != (color.NRGBA{1, 2, 3, 255}) {
		t.Errorf("colours %v, %v", pc.series[0].col, pc.series[1].col)
	}
	in := []byte(`<g id="a"><use href="#a"/><path style="fill:url(#a)"/></g>`)
	want := `<g id="p-a"><use href="#p-a"/><path style="fill:url(#p-a)"/></g>`
	if got := string(prefixIDs(in, "p-")); got != want {
		t.Errorf("prefixIDs = %s", got)
	}
	c.IDPrefix = "fig-1-"
	svg, err := c.SVG(4*vg.Inch, 3*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg, "a", "b")
}
