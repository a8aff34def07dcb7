package figure

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarChart is grouped bars with error bars: one group per category along x
// (e.g. datagram sizes "1000", "1100", ...; a single group "" when nothing is
// swept), one bar per series in every group (e.g. network modes).
//
// The y axis runs from 0 (or a nice number below the most negative mean
// minus its SD) to a nice number above the largest mean plus its SD, with a
// little room to the frame. An error bar reaching past 0 to the side with
// no data (a positive mean's bar below 0) is cut at the frame, without cap.
//
// Group names are centred under their groups; a chart of one group named ""
// has the series names under the bars instead, and LegendAuto then shows no
// legend. Labels too wide for their place are wrapped at spaces, '-', '/'
// and '_', then shrunk (down to 6 pt). The legend lists the named series
// and, if any error bar is drawn, notes "bars: mean; error bars: ± 1 SD";
// LegendAuto places it as for Chart, avoiding bars and error bars.
type BarChart struct {
	Title, Subtitle string
	XLabel, YLabel  string
	Groups          []string
	Series          []BarSeries
	YPercent        bool // y tick labels as percent (1.0 -> "100 %")
	Legend          LegendPlacement
	FontSize        vg.Length // 0 = same default as Chart
	EmbedFonts      bool
	ColourIndex     int    // series i gets SeriesColor(ColourIndex+i) unless it sets Color
	IDPrefix        string // as Chart.IDPrefix
}

// BarSeries is one series' bar heights and error bars, one per group.
// NaN and ±Inf count as missing; a negative SD is taken as its absolute
// value.
type BarSeries struct {
	Name  string
	Mean  []float64 // per group; NaN: no bar
	SD    []float64 // per group (may be nil); NaN or 0: no error bar
	Color color.Color
	// Base is where each bar starts (may be nil; NaN: 0): a waterfall's
	// bars float from the step before's total to their own.
	Base []float64
}

// Bar geometry and style (lengths in points).
const (
	barGroupFrac = 0.8            // part of a group's width its bars fill
	barGapFrac   = 0.1            // gap between neighbouring bars, of a bar's slot
	barGapMax    = vg.Length(2)   // that gap at most
	barFillMix   = 0.8            // share of the series colour in a bar's fill (rest white)
	barLineW     = vg.Length(0.6) // bar outline
	errLineW     = vg.Length(0.9) // error bar
	errCapFrac   = 0.25           // error bar cap half-width, of the bar's width
	errCapMax    = 0.45           // error bar cap half-width at most, in font sizes
	barEdgeRoom  = 0.03           // least room between error bar and frame, of the y range
	legendSwatch = 1.2            // legend swatch width, in font sizes
	labelGapEm   = 0.5            // least gap between x tick labels, in font sizes
	barMinFont   = vg.Length(6)   // smallest x tick label size
	barLabelSeps = " -/_"         // where long x tick labels may wrap
	barNote      = "bars: mean; error bars: ± 1 SD"
)

var errColour = color.NRGBA{0x1a, 0x1a, 0x1a, 0xff}

// barFill is the fill of a bar of colour c: c mixed with white, opaque.
func barFill(c color.NRGBA) color.NRGBA {
	mix := func(v uint8) uint8 { return uint8(math.Round(barFillMix*float64(v) + (1-barFillMix)*255)) }
	return color.NRGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

// SVG renders the chart as a self-contained SVG document, like Chart.SVG.
func (c BarChart) SVG(width, height vg.Length) ([]byte, error) {
	return renderSVG(width, height, c.EmbedFonts, c.IDPrefix, func() (drawer, error) { return c.prepare() })
}

// PNG renders the chart as a PNG image of width×height at dpi dots per
// inch, like Chart.PNG.
func (c BarChart) PNG(width, height vg.Length, dpi int) ([]byte, error) {
	return renderPNG(width, height, dpi, func() (drawer, error) { return c.prepare() })
}

// barSeries is a validated bar series; sd is NaN where there is no error
// bar and never negative.
type barSeries struct {
	name           string
	col            color.NRGBA
	mean, sd, base []float64
}

// barPrepared is a validated bar chart with its data range.
type barPrepared struct {
	c         BarChart
	series    []barSeries
	fs        vg.Length
	lo, hi    float64 // data range: 0, the means and the error bars' outer ends
	headroom  int     // extra y steps above the data, to make room for the legend
	labelBars bool    // one unnamed group: series names under the bars
	anyErr    bool
}

func (c BarChart) prepare() (*barPrepared, error) {
	n := len(c.Groups)
	if n == 0 {
		return nil, errors.New("figure: bar chart has no groups")
	}
	if len(c.Series) == 0 {
		return nil, errors.New("figure: bar chart has no series")
	}
	pc := &barPrepared{c: c, fs: c.FontSize, labelBars: n == 1 && c.Groups[0] == ""}
	if pc.fs <= 0 {
		pc.fs = vg.Points(9)
	}
	for i, s := range c.Series {
		if len(s.Mean) != n {
			return nil, fmt.Errorf("figure: bar series %q: %d means for %d groups", s.Name, len(s.Mean), n)
		}
		if s.SD != nil && len(s.SD) != n {
			return nil, fmt.Errorf("figure: bar series %q: %d standard deviations for %d groups", s.Name, len(s.SD), n)
		}
		if s.Base != nil && len(s.Base) != n {
			return nil, fmt.Errorf("figure: bar series %q: %d bases for %d groups", s.Name, len(s.Base), n)
		}
		bs := barSeries{name: s.Name, col: seriesColour(s.Color, c.ColourIndex+i), mean: s.Mean, sd: make([]float64, n), base: make([]float64, n)}
		for j, m := range s.Mean {
			bs.sd[j] = math.NaN()
			if !finite(m) {
				continue
			}
			if s.Base != nil && finite(s.Base[j]) {
				bs.base[j] = s.Base[j]
			}
			if s.SD != nil && finite(s.SD[j]) && s.SD[j] != 0 {
				bs.sd[j] = math.Abs(s.SD[j])
				pc.anyErr = true
			}
			// The error bar's outer end (away from 0) widens the range;
			// an inner end crossing 0 is clipped unless the other side
			// has data.
			lo, hi := bs.bounds(j)
			switch b := bs.base[j]; {
			case b != 0: // a floating bar: both ends and its error bar's
				pc.lo, pc.hi = min(pc.lo, lo, b), max(pc.hi, hi, b)
			case m >= 0:
				pc.hi = math.Max(pc.hi, hi)
			default:
				pc.lo = math.Min(pc.lo, lo)
			}
		}
		pc.series = append(pc.series, bs)
	}
	return pc, nil
}

// bounds is the extent of bar j with its error bar (the mean twice if it
// has none).
func (s *barSeries) bounds(j int) (lo, hi float64) {
	m, d := s.mean[j], s.sd[j]
	if !finite(d) {
		return m, m
	}
	return m - d, m + d
}

// yRange chooses the y axis for an axis ylen long: from 0 or a nice
// number below the data to a nice number above it (plus headroom), with
// some room between the outermost error bars and the frame.
func (pc *barPrepared) yRange(ylen vg.Length) (ymin, ymax, step float64) {
	lo, hi := pc.lo, pc.hi
	if hi <= lo {
		hi = lo + 1 // no data, or all zero
	}
	step = chooseStep(lo, hi, ylen, false, pc.c.YPercent, textStyle(pc.fs, false, black))
	ymin, ymax = niceFloor(lo, step), niceCeil(hi, step)
	if pc.hi > 0 && ymax-pc.hi < barEdgeRoom*(ymax-ymin) {
		ymax += step
	}
	if pc.lo < 0 && pc.lo-ymin < barEdgeRoom*(ymax-ymin) {
		ymin -= step
	}
	if ymin == 0 {
		ymin = 0 // no -0
	}
	ymax += float64(pc.headroom) * step
	return ymin, ymax, step
}

func (pc *barPrepared) draw(c draw.Canvas) {
	place := pc.c.Legend
	if place == LegendAuto && pc.labelBars {
		place = LegendNone // the names are under the bars
	}
	drawFigure(c, pc, pc.fs, pc.c.Title, pc.c.Subtitle, pc.legend(), place)
}

func (pc *barPrepared) layout(area draw.Canvas) (*plot.Plot, draw.Canvas) {
	return layoutPlot(area, pc.fs, pc.newPlot)
}

func (pc *barPrepared) yFixed() bool      { return false }
func (pc *barPrepared) setHeadroom(h int) { pc.headroom = h }

func (pc *barPrepared) drawFrame(dc draw.Canvas, p *plot.Plot) {
	drawFrame(dc, p, pc.fs, false)
}

func (pc *barPrepared) newPlot(xlen, ylen vg.Length) *plot.Plot {
	fs := pc.fs
	p := plot.New()
	p.BackgroundColor = nil
	ymin, ymax, ystep := pc.yRange(ylen)
	p.X.Min, p.X.Max = 0, float64(len(pc.c.Groups))
	p.Y.Min, p.Y.Max = ymin, ymax
	p.Y.Tick.Marker = niceTicks{step: ystep, minor: minorFor(ystep), percent: pc.c.YPercent}
	styleAxes(p, fs, xlen, ylen, pc.c.XLabel, pc.c.YLabel)

	// Categorical x axis: group names under the groups, or series names
	// under the bars of a single unnamed group.
	var at []float64
	var labels []string
	slot := xlen / vg.Length(len(pc.c.Groups))
	if pc.labelBars {
		for i, s := range pc.series {
			x0, x1 := pc.barSpan(0, i)
			at = append(at, (x0+x1)/2)
			labels = append(labels, s.name)
		}
		slot = xlen * barGroupFrac / vg.Length(len(pc.series))
	} else {
		for g, name := range pc.c.Groups {
			at = append(at, float64(g)+0.5)
			labels = append(labels, name)
		}
	}
	labels, sty := fitLabels(labels, textStyle(fs, false, black), slot-fs*labelGapEm)
	ticks := make([]plot.Tick, len(at))
	for i := range at {
		ticks[i] = plot.Tick{Value: at[i], Label: labels[i]}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Label.Font = sty.Font
	p.Add(barPlotter{pc})
	return p
}

// barSpan is the x range (data units) of the slot of series i's bar in
// group g.
func (pc *barPrepared) barSpan(g, i int) (x0, x1 float64) {
	w := barGroupFrac / float64(len(pc.series))
	x0 = float64(g) + (1-barGroupFrac)/2 + float64(i)*w
	return x0, x0 + w
}

// barRect is the drawn bar of series i in group g on the data canvas dc
// (between the mean and its base, 0 unless set, clamped to dc) and the y extent of the bar with
// its error bar (also clamped); ok is false if the bar is missing.
func (pc *barPrepared) barRect(p *plot.Plot, dc draw.Canvas, g, i int) (r vg.Rectangle, ylo, yhi vg.Length, ok bool) {
	s := &pc.series[i]
	m := s.mean[g]
	if !finite(m) {
		return r, 0, 0, false
	}
	trX, trY := p.Transforms(&dc)
	x0, x1 := pc.barSpan(g, i)
	l, h := trX(x0), trX(x1)
	gap := min((h-l)*barGapFrac, barGapMax)
	if len(pc.series) == 1 {
		gap = 0
	}
	clampY := func(y vg.Length) vg.Length { return min(max(y, dc.Min.Y), dc.Max.Y) }
	y0, y1 := clampY(trY(s.base[g])), clampY(trY(m))
	r = vg.Rectangle{Min: vg.Point{X: l + gap/2, Y: min(y0, y1)}, Max: vg.Point{X: h - gap/2, Y: max(y0, y1)}}
	lo, hi := s.bounds(g)
	ylo, yhi = min(r.Min.Y, clampY(trY(lo))), max(r.Max.Y, clampY(trY(hi)))
	return r, ylo, yhi, true
}

// barPlotter draws the grid, bars and error bars into the data area.
type barPlotter struct{ pc *barPrepared }

// Plot implements plot.Plotter.
func (d barPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	pc := d.pc
	_, trY := p.Transforms(&c)

	drawGrid(c, p, trY)

	// Bars, series by series.
	for i := range pc.series {
		s := &pc.series[i]
		fill := barFill(s.col)
		edge := draw.LineStyle{Color: s.col, Width: barLineW}
		for g := range pc.c.Groups {
			r, _, _, ok := pc.barRect(p, c, g, i)
			if !ok {
				continue
			}
			box := rect(r.Min.X, r.Min.Y, r.Max.X, r.Max.Y)
			if r.Max.Y-r.Min.Y > barLineW/2 {
				c.FillPolygon(fill, box)
				c.StrokeLines(edge, append(box, box[0]))
			} else {
				c.StrokeLine2(edge, r.Min.X, r.Min.Y, r.Max.X, r.Min.Y)
			}
		}
	}

	// The y = 0 line when there are negative values.
	if p.Y.Min < 0 && p.Y.Max > 0 {
		y := trY(0)
		c.StrokeLine2(draw.LineStyle{Color: black, Width: vg.Points(0.6)}, c.Min.X, y, c.Max.X, y)
	}

	// Error bars on top: mean ± SD with caps, clipped to the data area
	// (a clipped end has no cap).
	sty := draw.LineStyle{Color: errColour, Width: errLineW}
	for i := range pc.series {
		s := &pc.series[i]
		for g := range pc.c.Groups {
			if !finite(s.mean[g]) || !finite(s.sd[g]) {
				continue
			}
			r, _, _, _ := pc.barRect(p, c, g, i)
			x := (r.Min.X + r.Max.X) / 2
			capW := min((r.Max.X-r.Min.X)*errCapFrac, pc.fs*errCapMax)
			lo, hi := s.bounds(g)
			ylo, yhi := trY(lo), trY(hi)
			a, b := max(ylo, c.Min.Y), min(yhi, c.Max.Y)
			if a >= b {
				continue
			}
			c.StrokeLine2(sty, x, a, x, b)
			for _, y := range []vg.Length{ylo, yhi} {
				if y >= c.Min.Y && y <= c.Max.Y {
					c.StrokeLine2(sty, x-capW, y, x+capW, y)
				}
			}
		}
	}
}

// legend lists the series (and a note on the error bars) for the legend.
func (pc *barPrepared) legend() legend {
	l := legend{sty: textStyle(pc.fs, false, black)}
	for i := range pc.series {
		s := &pc.series[i]
		if s.name != "" {
			l.entries = append(l.entries, legendEntry{kind: entryBar, label: s.name, col: s.col})
		}
	}
	if pc.anyErr && len(l.entries) > 0 {
		l.entries = append(l.entries, legendEntry{kind: entryNote, label: barNote, col: darkGrey})
	}
	l.measure(pc.fs, pc.fs*legendSwatch)
	return l
}

// autoPlace picks the first inside corner whose legend covers no bar or
// error bar; otherwise the least covered one, ok = false.
func (pc *barPrepared) autoPlace(p *plot.Plot, dc draw.Canvas, size vg.Point) (place LegendPlacement, ok bool) {
	return pickCorner(dc, size, pc.fs, func(r vg.Rectangle) (int, bool) {
		hits := 0
		for i := range pc.series {
			for g := range pc.c.Groups {
				b, ylo, yhi, ok := pc.barRect(p, dc, g, i)
				if ok && b.Max.X >= r.Min.X && b.Min.X <= r.Max.X && yhi >= r.Min.Y && ylo <= r.Max.Y {
					hits++
				}
			}
		}
		return hits, hits == 0
	})
}

// fitLabels fits x tick labels into room points each: as they are if they
// fit, else wrapped at barLabelSeps, else shrunk (wrapped) down to
// barMinFont. It returns the labels and their style.
func fitLabels(labels []string, sty text.Style, room vg.Length) ([]string, text.Style) {
	fits := func(ls []string, sty text.Style) bool {
		for _, l := range ls {
			if sty.Width(l) > room {
				return false
			}
		}
		return true
	}
	if fits(labels, sty) {
		return labels, sty
	}
	for {
		out := make([]string, len(labels))
		for i, l := range labels {
			out[i] = wrapLabel(l, sty, room)
		}
		if fits(out, sty) || sty.Font.Size*0.92 < barMinFont {
			return out, sty
		}
		sty.Font.Size *= 0.92
	}
}

// wrapLabel breaks s into lines no wider than room where it can: after
// '-', '/' and '_', and at spaces (dropped).
func wrapLabel(s string, sty text.Style, room vg.Length) string {
	if sty.Width(s) <= room {
		return s
	}
	// Split into words, each keeping its trailing separator but spaces.
	var words []string
	start := 0
	for i, r := range s {
		if strings.ContainsRune(barLabelSeps, r) {
			words = append(words, s[start:i+len(string(r))])
			start = i + len(string(r))
		}
	}
	words = append(words, s[start:])
	var lines []string
	line := ""
	for _, w := range words {
		if w == "" {
			continue
		}
		cand := line + w
		if line != "" && sty.Width(strings.TrimRight(cand, " ")) > room {
			lines = append(lines, strings.TrimRight(line, " "))
			cand = w
		}
		line = cand
	}
	if t := strings.TrimRight(line, " "); t != "" || len(lines) == 0 {
		lines = append(lines, t)
	}
	return strings.Join(lines, "\n")
}
