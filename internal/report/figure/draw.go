package figure

import (
	"image/color"
	"math"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

var (
	black     = color.NRGBA{0, 0, 0, 0xff}
	darkGrey  = color.NRGBA{0x44, 0x44, 0x44, 0xff}
	guideGrey = color.NRGBA{0x6e, 0x6e, 0x6e, 0xff}
	refGrey   = color.NRGBA{0x8c, 0x8c, 0x8c, 0xff}
	gridGrey  = color.NRGBA{0xe6, 0xe6, 0xe6, 0xff}
	boxGrey   = color.NRGBA{0xa6, 0xa6, 0xa6, 0xff}
)

const pointAlpha = 0.15

func withAlpha(c color.NRGBA, a float64) color.NRGBA {
	c.A = uint8(math.Round(a * 255))
	return c
}

// textStyle is a Liberation Sans style of the given size.
func textStyle(size vg.Length, bold bool, col color.Color) text.Style {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return text.Style{Color: col, Font: f, Handler: plot.DefaultTextHandler}
}

// draw renders the whole figure on c.
func (pc *prepared) draw(c draw.Canvas) {
	drawFigure(c, pc, pc.fs, pc.c.Title, pc.c.Subtitle, pc.legend(), pc.c.Legend)
}

// plotLayout is what drawFigure needs of a chart type.
type plotLayout interface {
	// layout builds the plot for the area and returns it with its data
	// canvas.
	layout(area draw.Canvas) (*plot.Plot, draw.Canvas)
	// autoPlace picks the first free inside corner for a legend of the
	// given size (ok = true), else the least covered one.
	autoPlace(p *plot.Plot, dc draw.Canvas, size vg.Point) (place LegendPlacement, ok bool)
	// yFixed reports a fixed y range (no headroom can be added).
	yFixed() bool
	// setHeadroom sets the extra y steps above the data.
	setHeadroom(h int)
	// drawFrame draws the frame and tick marks around the data area.
	drawFrame(dc draw.Canvas, p *plot.Plot)
}

// drawFigure draws the background, title and subtitle, the plot and its
// legend, placed as documented at LegendPlacement.
func drawFigure(c draw.Canvas, f plotLayout, fs vg.Length, title, subtitle string, leg legend, place LegendPlacement) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())

	area := draw.Crop(c, fs*0.5, -fs*1.2, fs*0.4, -fs*0.6)

	// Title and subtitle, centred, shrunk to fit the width.
	for i, t := range []string{title, subtitle} {
		if t == "" {
			continue
		}
		size, bold, col := fs*1.45, true, color.Color(black)
		if i == 1 {
			size, bold, col = fs*1.1, false, color.Color(darkGrey)
		}
		sty := textStyle(size, bold, col)
		for sty.Width(t) > c.Size().X-2*fs && sty.Font.Size > vg.Points(6) {
			sty.Font.Size *= 0.92
		}
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: c.Center().X, Y: area.Max.Y}, t)
		area.Max.Y -= sty.Height(t) + fs*0.15
	}
	if title != "" || subtitle != "" {
		area.Max.Y -= fs * 0.5
	}

	if len(leg.entries) == 0 {
		place = LegendNone
	}
	p, dc := f.layout(area)
	if place == LegendAuto {
		var ok bool
		place, ok = f.autoPlace(p, dc, leg.size)
		if !ok && !f.yFixed() {
			// Make room above the data: up to three more y steps, at most
			// 45 % of the range.
			base := p.Y.Max - p.Y.Min
			for h := 1; h <= 3; h++ {
				f.setHeadroom(h)
				p2, dc2 := f.layout(area)
				if p2.Y.Max-p2.Y.Min > 1.45*base {
					break
				}
				if pl, ok2 := f.autoPlace(p2, dc2, leg.size); ok2 {
					p, dc, place, ok = p2, dc2, pl, true
					break
				}
			}
			if !ok {
				f.setHeadroom(0)
			}
		}
		if !ok {
			if leg.size.X <= c.Size().X*0.3 {
				place = LegendRight
			} else if leg.flow(c.Size().X-2*fs).size.Y <= min(c.Size().Y*0.3, dc.Size().Y*0.4) {
				place = LegendBelow
			}
		}
	}
	gap := fs * 0.8
	switch place {
	case LegendRight:
		area.Max.X -= leg.size.X + gap
		p, dc = f.layout(area)
	case LegendBelow:
		area.Min.Y += leg.flow(c.Size().X-2*fs).size.Y + gap*0.5
		p, dc = f.layout(area)
	}

	p.Draw(area)
	f.drawFrame(dc, p)

	switch place {
	case LegendNone:
	case LegendRight:
		leg.draw(c, vg.Point{X: area.Max.X + gap, Y: dc.Max.Y}, leg.column())
	case LegendBelow:
		a := leg.flow(c.Size().X - 2*fs)
		w := a.size.X
		x := min(max(dc.Center().X-w/2, c.Min.X+fs*0.5), c.Max.X-fs*0.5-w)
		leg.draw(c, vg.Point{X: x, Y: area.Min.Y - gap*0.5}, a)
	default:
		r := legendRect(dc, place, leg.size, fs)
		leg.draw(c, vg.Point{X: r.Min.X, Y: r.Max.Y}, leg.column())
	}
}

func (pc *prepared) yFixed() bool      { return pc.yfixed }
func (pc *prepared) setHeadroom(h int) { pc.headroom = h }

// layout builds the plot for the area, choosing ticks for the data
// area's real size (two passes: the tick labels change that size).
func (pc *prepared) layout(area draw.Canvas) (*plot.Plot, draw.Canvas) {
	return layoutPlot(area, pc.fs, pc.newPlot)
}

// layoutPlot builds the plot with newPlot for the data area's lengths,
// in two passes (the tick labels change them).
func layoutPlot(area draw.Canvas, fs vg.Length, newPlot func(xlen, ylen vg.Length) *plot.Plot) (*plot.Plot, draw.Canvas) {
	xlen := area.Size().X - 6*fs
	ylen := area.Size().Y - 4*fs
	var p *plot.Plot
	var dc draw.Canvas
	for range 2 {
		p = newPlot(xlen, ylen)
		dc = p.DataCanvas(area)
		xlen, ylen = dc.Size().X, dc.Size().Y
	}
	return p, dc
}

func (pc *prepared) newPlot(xlen, ylen vg.Length) *plot.Plot {
	fs := pc.fs
	p := plot.New()
	p.BackgroundColor = nil
	tick := textStyle(fs, false, black)

	xmin, xmax := pc.xmin, pc.xmax
	var xticks plot.Ticker = logTicks{}
	if !pc.c.XLog {
		xstep := chooseStep(xmin, xmax, xlen, true, false, tick)
		if pc.c.XMax == nil {
			// End on a tick if that is close to the data's end.
			if c := niceCeil(xmax, xstep); c-xmax <= 0.03*(xmax-xmin) {
				xmax = c
			}
		}
		xticks = niceTicks{step: xstep, minor: minorFor(xstep)}
	}
	ymin, ymax := pc.ymin, pc.ytop
	ystep := chooseStep(ymin, ymax, ylen, false, pc.c.YPercent, tick)
	if !pc.yfixed {
		ymax = niceCeil(ymax, ystep)
		if pc.c.YMin == nil && ymin < 0 {
			ymin = niceFloor(ymin, ystep)
		}
		if ymax <= ymin {
			ymax = ymin + ystep
		}
		// Keep the 100 % line off the frame.
		if h := pc.c.HLine; h != nil && finite(*h) && ymax-*h < 0.5*ystep {
			ymax += ystep
		}
		ymax += float64(pc.headroom) * ystep
	}
	p.X.Min, p.X.Max = xmin, xmax
	p.Y.Min, p.Y.Max = ymin, ymax
	p.X.Tick.Marker = xticks
	if pc.c.XLog {
		p.X.Scale = logScale{}
	}
	p.Y.Tick.Marker = niceTicks{step: ystep, minor: minorFor(ystep), percent: pc.c.YPercent}

	styleAxes(p, fs, xlen, ylen, pc.c.XLabel, pc.c.YLabel)
	p.Add(dataPlotter{pc})
	return p
}

// styleAxes sets the axes' fonts, paddings and labels (shrunk to the
// axes' lengths) and switches off gonum's axis lines and tick marks.
func styleAxes(p *plot.Plot, fs, xlen, ylen vg.Length, xlabel, ylabel string) {
	tick := textStyle(fs, false, black)
	label := textStyle(fs*1.1, false, black)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		// Axis lines and tick marks are drawn by drawFrame (inward ticks
		// on a closed frame), so gonum's own are switched off.
		a.LineStyle.Width = 0
		a.Tick.Length = 0
		a.Tick.Width = 0
		a.Padding = fs * 0.45
		a.Tick.Label.Font = tick.Font
		a.Tick.Label.Color = black
		a.Label.TextStyle.Font = label.Font
		a.Label.TextStyle.Color = black
		a.Label.Padding = fs * 0.35
	}
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	// Shrink axis labels longer than their axis.
	for _, a := range []struct {
		ax  *plot.Axis
		len vg.Length
	}{{&p.X, xlen}, {&p.Y, ylen}} {
		for a.ax.Label.TextStyle.Width(a.ax.Label.Text) > a.len && a.ax.Label.TextStyle.Font.Size > vg.Points(6) {
			a.ax.Label.TextStyle.Font.Size *= 0.92
		}
	}
}

// drawFrame draws the box around the data area and inward tick marks.
func (pc *prepared) drawFrame(dc draw.Canvas, p *plot.Plot) {
	drawFrame(dc, p, pc.fs, true)
}

// drawFrame draws the box around the data area and inward tick marks on
// the y axis and, if xMarks, on the x axis.
func drawFrame(dc draw.Canvas, p *plot.Plot, fs vg.Length, xMarks bool) {
	w := vg.Points(0.6)
	sty := draw.LineStyle{Color: black, Width: w}
	trX, trY := p.Transforms(&dc)
	major, minor := fs*0.45, fs*0.25
	var xTicks []plot.Tick
	if xMarks {
		xTicks = p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max)
	}
	for _, t := range xTicks {
		x := trX(t.Value)
		if x <= dc.Min.X+w || x >= dc.Max.X-w {
			continue
		}
		l := major
		if t.IsMinor() {
			l = minor
		}
		dc.StrokeLine2(sty, x, dc.Min.Y, x, dc.Min.Y+l)
	}
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		y := trY(t.Value)
		if y <= dc.Min.Y+w || y >= dc.Max.Y-w {
			continue
		}
		l := major
		if t.IsMinor() {
			l = minor
		}
		dc.StrokeLine2(sty, dc.Min.X, y, dc.Min.X+l, y)
	}
	r := dc.Rectangle
	dc.StrokeLines(sty, []vg.Point{
		{X: r.Min.X, Y: r.Min.Y}, {X: r.Max.X, Y: r.Min.Y},
		{X: r.Max.X, Y: r.Max.Y}, {X: r.Min.X, Y: r.Max.Y},
		{X: r.Min.X, Y: r.Min.Y},
	})
}

// drawGrid draws a light horizontal grid at the major y ticks.
func drawGrid(c draw.Canvas, p *plot.Plot, trY func(float64) vg.Length) {
	grid := draw.LineStyle{Color: gridGrey, Width: vg.Points(0.5)}
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.IsMinor() {
			continue
		}
		if y := trY(t.Value); y > c.Min.Y+0.5 && y < c.Max.Y-0.5 {
			c.StrokeLine2(grid, c.Min.X, y, c.Max.X, y)
		}
	}
}

// dataPlotter draws grid, points, guides, bands and lines into the data
// area, clipped to it.
type dataPlotter struct{ pc *prepared }

// Plot implements plot.Plotter.
func (d dataPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	pc := d.pc
	trX, trY := p.Transforms(&c)
	pt := func(x, y float64) vg.Point { return vg.Point{X: trX(x), Y: trY(y)} }

	drawGrid(c, p, trY)

	// Raw points, small and translucent, under everything else.
	r := pc.fs * 0.12
	if r < vg.Points(0.8) {
		r = vg.Points(0.8)
	}
	for i := range pc.series {
		s := &pc.series[i]
		if len(s.px) == 0 {
			continue
		}
		c.SetColor(withAlpha(s.col, pointAlpha))
		for j := range s.px {
			if !finite(s.px[j]) || !finite(s.py[j]) {
				continue
			}
			q := pt(s.px[j], s.py[j])
			if !c.Contains(q) {
				continue
			}
			var path vg.Path
			path.Move(vg.Point{X: q.X + r, Y: q.Y})
			path.Arc(q, r, 0, 2*math.Pi)
			path.Close()
			c.Fill(path)
		}
	}

	// Dashed guides (TCP receive window multiples).
	guide := draw.LineStyle{Color: guideGrey, Width: vg.Points(0.7), Dashes: []vg.Length{vg.Points(3), vg.Points(2.5)}}
	for _, v := range pc.c.VLines {
		if finite(v) && v > p.X.Min && v < p.X.Max {
			x := trX(v)
			c.StrokeLine2(guide, x, c.Min.Y, x, c.Max.Y)
		}
	}

	// 90 % bands, then 50 % bands, then the 90 % band edges.
	for i := range pc.series {
		if s := &pc.series[i]; s.b90 != nil {
			fillBand(&c, s.x, s.b90, withAlpha(s.col, pc.alpha90), pt)
		}
	}
	for i := range pc.series {
		if s := &pc.series[i]; s.b50 != nil {
			fillBand(&c, s.x, s.b50, withAlpha(s.col, pc.alpha50), pt)
		}
	}
	for i := range pc.series {
		s := &pc.series[i]
		if s.b90 == nil {
			continue
		}
		edge := draw.LineStyle{Color: withAlpha(s.col, 0.75), Width: vg.Points(0.5), Dashes: []vg.Length{vg.Points(2), vg.Points(1.5)}}
		strokeLine(&c, s.x, s.b90.Lo, edge, pt)
		strokeLine(&c, s.x, s.b90.Hi, edge, pt)
	}

	// The 100 % line of loss plots.
	if h := pc.c.HLine; h != nil && finite(*h) && *h >= p.Y.Min && *h <= p.Y.Max {
		y := trY(*h)
		c.StrokeLine2(draw.LineStyle{Color: refGrey, Width: vg.Points(1.2)}, c.Min.X, y, c.Max.X, y)
	}

	// Median lines on top.
	for i := range pc.series {
		s := &pc.series[i]
		if s.med != nil {
			strokeLine(&c, s.x, s.med, draw.LineStyle{Color: s.col, Width: vg.Points(1.6)}, pt)
		}
	}
}

// runs returns the maximal index ranges [a, b) where ok holds.
func runs(n int, ok func(int) bool) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i <= n; i++ {
		if i < n && ok(i) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	return out
}

// fillBand fills the band between Lo and Hi, one polygon per run without
// NaN; a lone value becomes a short vertical bar.
func fillBand(c *draw.Canvas, x []float64, b *Band, col color.NRGBA, pt func(x, y float64) vg.Point) {
	for _, rg := range runs(len(x), func(i int) bool { return finite(x[i]) && finite(b.Lo[i]) && finite(b.Hi[i]) }) {
		if rg[1]-rg[0] == 1 {
			i := rg[0]
			l := c.ClipLinesXY([]vg.Point{pt(x[i], b.Lo[i]), pt(x[i], b.Hi[i])})
			c.StrokeLines(draw.LineStyle{Color: col, Width: vg.Points(2)}, l...)
			continue
		}
		poly := make([]vg.Point, 0, 2*(rg[1]-rg[0]))
		for i := rg[0]; i < rg[1]; i++ {
			poly = append(poly, pt(x[i], b.Lo[i]))
		}
		for i := rg[1] - 1; i >= rg[0]; i-- {
			poly = append(poly, pt(x[i], b.Hi[i]))
		}
		if clipped := c.ClipPolygonXY(poly); len(clipped) > 2 {
			c.FillPolygon(col, clipped)
		}
	}
}

// strokeLine draws y over x, split at NaN; a lone value becomes a dot.
func strokeLine(c *draw.Canvas, x, y []float64, sty draw.LineStyle, pt func(x, y float64) vg.Point) {
	for _, rg := range runs(len(x), func(i int) bool { return finite(x[i]) && finite(y[i]) }) {
		if rg[1]-rg[0] == 1 {
			q := pt(x[rg[0]], y[rg[0]])
			if c.Contains(q) {
				c.DrawGlyph(draw.GlyphStyle{Color: sty.Color, Radius: sty.Width, Shape: draw.CircleGlyph{}}, q)
			}
			continue
		}
		line := make([]vg.Point, 0, rg[1]-rg[0])
		for i := rg[0]; i < rg[1]; i++ {
			line = append(line, pt(x[i], y[i]))
		}
		c.StrokeLines(sty, c.ClipLinesXY(line)...)
	}
}
