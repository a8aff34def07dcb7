// Package figure renders cnperf's charts (transfer plots, loss plots) as SVG
// for inline HTML and as PNG for papers, in the style of ppbench's R plots:
// translucent raw points, a median line, 50 % and 90 % bands and dashed
// guides at multiples of the TCP receive window.
//
// Rendering uses gonum.org/v1/plot and is pure Go. Output is deterministic:
// the same Chart gives the same bytes.
package figure

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Band is a range around a series' line, one Lo/Hi pair per X value.
// NaN in Lo or Hi is a gap: the band is not drawn across it.
type Band struct{ Lo, Hi []float64 }

// Series is one data series of a chart.
type Series struct {
	Name   string
	X      []float64 // x of the line and the bands (e.g. bin centres, kB)
	Median []float64 // the line; NaN = gap
	Band50 *Band     // 25th–75th percentile band, drawn translucent
	Band90 *Band     // 5th–95th percentile band, lighter, with thin dashed edges
	PX, PY []float64 // raw points (optional), drawn small and translucent under the bands

	// Color overrides the palette colour (nil: SeriesColor(i)). Use it to
	// keep a mode's colour when it is drawn alone or in another order.
	Color color.Color
}

// LegendPlacement says where the legend goes.
type LegendPlacement int

// Legend placements. LegendAuto tries the inside corners (top-left,
// top-right, bottom-right, bottom-left) and takes the first that covers no
// median line, hardly any band and few raw points; failing that it adds up
// to three y steps of headroom (≤ 45 % of the range) and tries again; then
// outside at the right if the legend is narrow (≤ 30 % of the width), else
// below the plot, entries wrapped in rows.
const (
	LegendAuto LegendPlacement = iota
	LegendTopLeft
	LegendTopRight
	LegendBottomRight
	LegendBottomLeft
	LegendRight // outside the data area, at the right
	LegendBelow // under the x axis label, in columns
	LegendNone
)

// DefaultVLineLabel is the legend text for Chart.VLines.
const DefaultVLineLabel = "TCP receive window multiples"

// DefaultMaxPoints caps the raw points drawn per series when
// Chart.MaxPoints is 0.
const DefaultMaxPoints = 4000

// Chart describes one figure.
type Chart struct {
	Title, Subtitle string // subtitle e.g. "bigger is better"
	XLabel, YLabel  string // with units, e.g. "Message size (kB)"
	Series          []Series

	// VLines are dashed vertical guides (e.g. multiples of the TCP receive
	// window, in X units), labelled once in the legend with VLineLabel
	// (default DefaultVLineLabel).
	VLines     []float64
	VLineLabel string

	// HLine is a solid grey horizontal line (e.g. 1.0, the 100 % line of a
	// loss plot); HLineLabel, if set, names it in the legend.
	HLine      *float64
	HLineLabel string

	YPercent bool // y tick labels as percent (1.0 → "100 %")

	// YMin, YMax fix the y range. By default it is 0 (or below, for negative
	// data) up to a nice number above the 99th percentile of the line and
	// band values (and HLine); raw points above it are clipped.
	YMin, YMax *float64
	// XMin, XMax fix the x range. By default 0 (or the data minimum if
	// negative) up to the largest X or PX; on a log axis from the power of
	// ten at or below the smallest positive x to the one at or above the
	// largest.
	XMin, XMax *float64

	// XLog draws the x axis logarithmically, with a tick at every power of
	// ten: message sizes spanning several decades (10 B … 1 MB) would
	// otherwise crowd into the axis's first tenth. Values at or below 0
	// cannot be drawn on it and are left out.
	XLog bool

	MaxPoints int // cap of raw points per series (every k-th); 0 = DefaultMaxPoints

	// ColourIndex offsets the palette: series i gets SeriesColor(ColourIndex+i)
	// unless it sets Color. A mode drawn alone keeps its colour from the
	// comparison chart by passing its index there.
	ColourIndex int

	// IDPrefix is put before every element id in the SVG, so several SVGs
	// can be inlined in one HTML page. gonum's vgsvg (v0.17) emits no ids
	// at all, so today this changes nothing; it guards against a future
	// renderer that does.
	IDPrefix string

	Legend LegendPlacement

	// FontSize is the size of tick labels and legend text; axis labels,
	// subtitle and title are a little larger. 0 = 9 pt.
	FontSize vg.Length

	// EmbedFonts embeds the Liberation Sans font data in the SVG (about
	// 1 MB). Without it the SVG names 'Liberation Sans' with the
	// metric-compatible fallbacks Arial, Helvetica, sans-serif.
	EmbedFonts bool
}

// Palette is the series palette: a dark grey for the reference (first)
// series, then the Okabe–Ito colour-blind-safe colours (black and, last,
// yellow reordered for contrast on white).
var Palette = []color.NRGBA{
	{0x3a, 0x3a, 0x3a, 0xff}, // dark grey (reference)
	{0xd5, 0x5e, 0x00, 0xff}, // vermillion
	{0x00, 0x72, 0xb2, 0xff}, // blue
	{0x00, 0x9e, 0x73, 0xff}, // bluish green
	{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	{0xe6, 0x9f, 0x00, 0xff}, // orange
	{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	{0xf0, 0xe4, 0x42, 0xff}, // yellow
}

// SeriesColor is the palette colour of series i (cycling).
func SeriesColor(i int) color.NRGBA {
	if i < 0 {
		i = -i
	}
	return Palette[i%len(Palette)]
}

// seriesColour is a series' own colour, made opaque, or else the
// palette's i-th.
func seriesColour(c color.Color, i int) color.NRGBA {
	if c == nil {
		return SeriesColor(i)
	}
	nc := color.NRGBAModel.Convert(c).(color.NRGBA)
	nc.A = 0xff
	return nc
}

// maxPixels bounds each PNG side, to refuse absurd sizes early.
const maxPixels = 20000

// SVG renders the chart as a self-contained SVG document (no XML prolog,
// no ids, no external references except the SVG namespace), ready to be
// written to a file or inlined in HTML. Sizes are in vg units (vg.Inch,
// vg.Points(…)).
func (c Chart) SVG(width, height vg.Length) ([]byte, error) {
	return renderSVG(width, height, c.EmbedFonts, c.IDPrefix, func() (drawer, error) { return c.prepare() })
}

// drawer is a chart checked and made ready to draw: a Chart's or a
// BarChart's.
type drawer interface{ draw(draw.Canvas) }

// renderSVG checks the size, prepares the chart and draws it on an SVG
// canvas, and returns the cleaned SVG.
func renderSVG(width, height vg.Length, embedFonts bool, idPrefix string, prepare func() (drawer, error)) ([]byte, error) {
	if err := checkSize(width, height); err != nil {
		return nil, err
	}
	pc, err := prepare()
	if err != nil {
		return nil, err
	}
	cv := vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(embedFonts))
	if err := drawSafe(draw.New(cv), pc.draw); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("figure: writing SVG: %w", err)
	}
	return prefixIDs(cleanSVG(buf.Bytes()), idPrefix), nil
}

// prefixIDs puts prefix before every id="…" and every local reference to
// one (url(#…), href="#…").
func prefixIDs(b []byte, prefix string) []byte {
	if prefix == "" {
		return b
	}
	for _, pat := range []string{` id="`, `url(#`, `href="#`} {
		b = bytes.ReplaceAll(b, []byte(pat), []byte(pat+prefix))
	}
	return b
}

// PNG renders the chart as a PNG image of width×height at dpi dots per
// inch (e.g. 6×4 inch at 300 dpi is 1800×1200 pixels).
func (c Chart) PNG(width, height vg.Length, dpi int) ([]byte, error) {
	return renderPNG(width, height, dpi, func() (drawer, error) { return c.prepare() })
}

// renderPNG checks the size and resolution, prepares the chart and draws
// it on an image canvas, and encodes it as PNG.
func renderPNG(width, height vg.Length, dpi int, prepare func() (drawer, error)) ([]byte, error) {
	if err := checkSize(width, height); err != nil {
		return nil, err
	}
	if dpi <= 0 {
		return nil, fmt.Errorf("figure: dpi must be > 0, got %d", dpi)
	}
	if px := float64(max(width, height)/vg.Inch) * float64(dpi); px > maxPixels {
		return nil, fmt.Errorf("figure: PNG would be %.0f pixels wide or high (max %d)", px, maxPixels)
	}
	pc, err := prepare()
	if err != nil {
		return nil, err
	}
	cv := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi))
	if err := drawSafe(draw.New(cv), pc.draw); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("figure: writing PNG: %w", err)
	}
	return buf.Bytes(), nil
}

func checkSize(w, h vg.Length) error {
	if !(w > 0 && h > 0) || math.IsInf(float64(w), 0) || math.IsInf(float64(h), 0) {
		return fmt.Errorf("figure: width and height must be > 0, got %v × %v", w, h)
	}
	if w < vg.Inch || h < vg.Points(54) {
		return fmt.Errorf("figure: %v × %v is too small for a chart", w, h)
	}
	return nil
}

// prepSeries is a validated series with thinned raw points.
type prepSeries struct {
	name     string
	col      color.NRGBA
	x, med   []float64
	b50, b90 *Band
	px, py   []float64
}

func (s *prepSeries) hasBands() bool { return s.b50 != nil || s.b90 != nil }

// prepared is a validated chart with resolved ranges.
type prepared struct {
	c          Chart
	series     []prepSeries
	xmin, xmax float64
	ymin       float64
	ytop       float64 // auto mode: value the max must reach; fixed: the max
	yfixed     bool
	fs         vg.Length
	alpha50    float64
	alpha90    float64
	nPoints    int
	headroom   int // extra y steps above the data, to make room for the legend
}

var errEmpty = errors.New("figure: chart has no series")

func (c Chart) prepare() (*prepared, error) {
	if len(c.Series) == 0 {
		return nil, errEmpty
	}
	maxPts := c.MaxPoints
	if maxPts <= 0 {
		maxPts = DefaultMaxPoints
	}
	pc := &prepared{c: c, fs: c.FontSize}
	if pc.fs <= 0 {
		pc.fs = vg.Points(9)
	}
	var xs, ys, pys []float64
	nBands := 0
	for i, s := range c.Series {
		n := len(s.X)
		if s.Median != nil && len(s.Median) != n {
			return nil, fmt.Errorf("figure: series %q: %d medians for %d x values", s.Name, len(s.Median), n)
		}
		for _, b := range []struct {
			name string
			b    *Band
		}{{"Band50", s.Band50}, {"Band90", s.Band90}} {
			if b.b != nil && (len(b.b.Lo) != n || len(b.b.Hi) != n) {
				return nil, fmt.Errorf("figure: series %q: %s has %d/%d values for %d x values", s.Name, b.name, len(b.b.Lo), len(b.b.Hi), n)
			}
		}
		if len(s.PX) != len(s.PY) {
			return nil, fmt.Errorf("figure: series %q: %d point x values but %d y values", s.Name, len(s.PX), len(s.PY))
		}
		ps := prepSeries{name: s.Name, x: s.X, med: s.Median, b50: s.Band50, b90: s.Band90}
		if c.XLog {
			ps.x = positive(s.X)
		}
		ps.col = seriesColour(s.Color, c.ColourIndex+i)
		ps.px, ps.py = thin(s.PX, s.PY, maxPts)
		if c.XLog {
			ps.px = positive(ps.px)
		}
		pc.nPoints += len(ps.px)
		if ps.hasBands() {
			nBands++
		}
		for j, x := range ps.x {
			if !finite(x) {
				continue
			}
			any := false
			for _, v := range ps.valuesAt(j) {
				if finite(v) {
					ys = append(ys, v)
					any = true
				}
			}
			if any {
				xs = append(xs, x)
			}
		}
		for j := range ps.px {
			if finite(ps.px[j]) && finite(ps.py[j]) {
				xs = append(xs, ps.px[j])
				pys = append(pys, ps.py[j])
			}
		}
		pc.series = append(pc.series, ps)
	}
	if len(xs) == 0 {
		return nil, errors.New("figure: chart has no finite data")
	}
	if len(ys) == 0 {
		ys = pys
	}

	// x range
	xlo, xhi := minMax(xs)
	pc.xmin = math.Min(0, xlo)
	pc.xmax = xhi
	if c.XLog {
		pc.xmin, pc.xmax = decadeFloor(xlo), decadeCeil(xhi)
		if pc.xmax <= pc.xmin {
			pc.xmax = pc.xmin * 10
		}
	}
	if c.XMin != nil {
		pc.xmin = *c.XMin
	}
	if c.XMax != nil {
		pc.xmax = *c.XMax
	}
	if c.XLog && !(pc.xmin > 0) {
		return nil, fmt.Errorf("figure: x range [%g, %g] on a log axis: must be above 0", pc.xmin, pc.xmax)
	}
	if !finite(pc.xmin) || !finite(pc.xmax) || pc.xmax <= pc.xmin {
		if c.XMin != nil || c.XMax != nil {
			return nil, fmt.Errorf("figure: empty x range [%g, %g]", pc.xmin, pc.xmax)
		}
		pc.xmin, pc.xmax = pc.xmin-1, pc.xmax+1
	}

	// y range
	ylo, _ := minMax(ys)
	top := percentile(ys, 0.99)
	bottom := 0.0
	if ylo < 0 {
		bottom = percentile(ys, 0.01)
	}
	if c.HLine != nil && finite(*c.HLine) {
		top = math.Max(top, *c.HLine)
		bottom = math.Min(bottom, *c.HLine)
	}
	if c.YMin != nil {
		bottom = *c.YMin
	}
	pc.ymin, pc.ytop = bottom, top
	if c.YMax != nil {
		pc.ytop = *c.YMax
		pc.yfixed = true
	}
	if !finite(pc.ymin) || !finite(pc.ytop) {
		return nil, fmt.Errorf("figure: invalid y range [%g, %g]", pc.ymin, pc.ytop)
	}
	if pc.ytop <= pc.ymin {
		if pc.yfixed {
			return nil, fmt.Errorf("figure: empty y range [%g, %g]", pc.ymin, pc.ytop)
		}
		pc.ytop = pc.ymin + math.Max(1, math.Abs(pc.ymin))
	}

	// Fewer, lighter bands when many series overlap.
	k := math.Sqrt(math.Max(1, float64(nBands)))
	pc.alpha90 = math.Max(0.08, 0.22/k)
	pc.alpha50 = math.Max(0.16, 0.42/k)
	return pc, nil
}

// valuesAt returns the line and band values at index j (NaN where absent).
func (s *prepSeries) valuesAt(j int) [5]float64 {
	v := [5]float64{math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	if s.med != nil {
		v[0] = s.med[j]
	}
	if s.b50 != nil {
		v[1], v[2] = s.b50.Lo[j], s.b50.Hi[j]
	}
	if s.b90 != nil {
		v[3], v[4] = s.b90.Lo[j], s.b90.Hi[j]
	}
	return v
}

// positive returns x with every value at or below 0 made NaN (a gap):
// what a log axis cannot show. x itself is not changed.
func positive(x []float64) []float64 {
	out := x
	for i, v := range x {
		if v <= 0 {
			if &out[0] == &x[0] {
				out = append([]float64(nil), x...)
			}
			out[i] = math.NaN()
		}
	}
	return out
}

// thin keeps at most max points, evenly spread over the input order
// (deterministic: indices ⌊i·n/max⌋).
func thin(px, py []float64, max int) ([]float64, []float64) {
	n := len(px)
	if n <= max {
		return px, py
	}
	ox := make([]float64, max)
	oy := make([]float64, max)
	for i := range max {
		j := int(int64(i) * int64(n) / int64(max))
		ox[i], oy[i] = px[j], py[j]
	}
	return ox, oy
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo = math.Min(lo, x)
		hi = math.Max(hi, x)
	}
	return lo, hi
}

// percentile returns the p-quantile (0..1) of v by linear interpolation.
func percentile(v []float64, p float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	r := p * float64(len(s)-1)
	i := int(math.Floor(r))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := r - float64(i)
	return s[i] + f*(s[i+1]-s[i])
}

// drawSafe draws with fn and turns a panic inside gonum/plot into an
// error.
func drawSafe(c draw.Canvas, fn func(draw.Canvas)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("figure: rendering failed: %v", r)
		}
	}()
	fn(c)
	return nil
}

// cleanSVG makes vgsvg's output inline-friendly: no XML prolog or
// generator comment, no unused xlink namespace, and a font fallback stack
// for the non-embedded Liberation fonts.
func cleanSVG(b []byte) []byte {
	if i := bytes.Index(b, []byte("<svg")); i > 0 {
		b = b[i:]
	}
	if !bytes.Contains(b, []byte("xlink:href")) {
		b = bytes.Replace(b, []byte("\n\txmlns:xlink=\"http://www.w3.org/1999/xlink\""), nil, 1)
	}
	b = bytes.ReplaceAll(b, []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	return b
}

// ensure the plot package's init (font registration) is linked in.
var _ = plot.DefaultFont
