package figure

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

type entryKind int

const (
	entrySeries entryKind = iota
	entryVLine
	entryHLine
	entryNote // text only, grey
	entryBar  // a filled box with an outline (bar charts)
)

type legendEntry struct {
	kind     entryKind
	label    string
	col      color.NRGBA
	b50, b90 bool
	line     bool
}

type legend struct {
	entries []legendEntry
	sty     text.Style
	size    vg.Point // size of the one-column box
	rowH    vg.Length
	pad     vg.Length
	swatchW vg.Length
	gap     vg.Length   // between swatch and text
	widths  []vg.Length // per entry: swatch, gap, text
	colGap  vg.Length

	alpha50, alpha90 float64 // of the band swatches
}

// legend lists the legend's entries and measures the box.
func (pc *prepared) legend() legend {
	l := legend{sty: textStyle(pc.fs, false, black)}
	anyBands := false
	for i := range pc.series {
		s := &pc.series[i]
		anyBands = anyBands || s.hasBands()
		if s.name == "" {
			continue
		}
		l.entries = append(l.entries, legendEntry{
			kind: entrySeries, label: s.name, col: s.col,
			b50: s.b50 != nil, b90: s.b90 != nil, line: s.med != nil,
		})
	}
	if anyBands && len(l.entries) > 0 {
		l.entries = append(l.entries, legendEntry{kind: entryNote, label: "lines: median; bands: 50 %, 90 %", col: darkGrey})
	}
	if len(pc.c.VLines) > 0 {
		lab := pc.c.VLineLabel
		if lab == "" {
			lab = DefaultVLineLabel
		}
		l.entries = append(l.entries, legendEntry{kind: entryVLine, label: lab, col: guideGrey})
	}
	if pc.c.HLine != nil && pc.c.HLineLabel != "" {
		l.entries = append(l.entries, legendEntry{kind: entryHLine, label: pc.c.HLineLabel, col: refGrey})
	}
	l.alpha50, l.alpha90 = pc.alpha50, pc.alpha90
	l.measure(pc.fs, pc.fs*2.4)
	return l
}

// measure sets the legend's metrics for font size fs and swatches swatchW
// wide, and measures the box.
func (l *legend) measure(fs, swatchW vg.Length) {
	l.rowH = fs * 1.45
	l.pad = fs * 0.5
	l.swatchW = swatchW
	l.gap = fs * 0.55
	l.colGap = fs * 1.5
	l.widths = nil
	for _, e := range l.entries {
		w := l.swatchW + l.gap + l.sty.Width(e.label)
		if e.kind == entryNote {
			w = l.noteStyle().Width(e.label)
		}
		l.widths = append(l.widths, w)
	}
	l.size = l.column().size
}

func (l legend) noteStyle() text.Style {
	ns := l.sty
	ns.Color = darkGrey
	ns.Font.Size = l.sty.Font.Size * 0.9
	return ns
}

// arrangement places the entries: offsets of each entry from the box's
// top-left content corner, and the box size.
type arrangement struct {
	at   []vg.Point // x offset, row index in Y
	size vg.Point
}

// column stacks the entries in one column.
func (l legend) column() arrangement {
	return l.flow(0)
}

// flow fills rows left to right, wrapping before width (0: one entry per
// row).
func (l legend) flow(width vg.Length) arrangement {
	var a arrangement
	var x, maxX vg.Length
	row := 0
	inner := width - l.pad*2.2
	for i, w := range l.widths {
		if i > 0 && (width == 0 || x+l.colGap+w > inner) {
			row++
			x = 0
		} else if i > 0 {
			x += l.colGap
		}
		a.at = append(a.at, vg.Point{X: x, Y: vg.Length(row)})
		x += w
		maxX = max(maxX, x)
	}
	a.size = vg.Point{X: maxX + l.pad*2.2, Y: 2*l.pad*0.6 + vg.Length(row+1)*l.rowH}
	return a
}

// draw draws the legend box arranged as a, with its top-left corner at tl.
func (l legend) draw(c draw.Canvas, tl vg.Point, a arrangement) {
	size := a.size
	r := vg.Rectangle{Min: vg.Point{X: tl.X, Y: tl.Y - size.Y}, Max: vg.Point{X: tl.X + size.X, Y: tl.Y}}
	box := []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}
	c.FillPolygon(color.White, box)
	c.StrokeLines(draw.LineStyle{Color: boxGrey, Width: vg.Points(0.5)}, append(box, r.Min))

	sty := l.sty
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	for i, e := range l.entries {
		x0 := r.Min.X + l.pad + a.at[i].X
		x1 := x0 + l.swatchW
		yc := r.Max.Y - l.pad*0.6 - l.rowH*(a.at[i].Y+0.5)
		h90, h50 := l.rowH*0.36, l.rowH*0.17
		switch e.kind {
		case entrySeries:
			if e.b90 {
				c.FillPolygon(withAlpha(e.col, l.alpha90), rect(x0, yc-h90, x1, yc+h90))
				edge := draw.LineStyle{Color: withAlpha(e.col, 0.75), Width: vg.Points(0.5), Dashes: []vg.Length{vg.Points(2), vg.Points(1.5)}}
				c.StrokeLine2(edge, x0, yc-h90, x1, yc-h90)
				c.StrokeLine2(edge, x0, yc+h90, x1, yc+h90)
			}
			if e.b50 {
				c.FillPolygon(withAlpha(e.col, l.alpha50), rect(x0, yc-h50, x1, yc+h50))
			}
			if e.line || (!e.b50 && !e.b90) {
				c.StrokeLine2(draw.LineStyle{Color: e.col, Width: vg.Points(1.6)}, x0, yc, x1, yc)
			}
		case entryBar:
			h := l.rowH * 0.3
			c.FillPolygon(barFill(e.col), rect(x0, yc-h, x1, yc+h))
			c.StrokeLines(draw.LineStyle{Color: e.col, Width: barLineW}, append(rect(x0, yc-h, x1, yc+h), vg.Point{X: x0, Y: yc - h}))
		case entryVLine:
			c.StrokeLine2(draw.LineStyle{Color: e.col, Width: vg.Points(0.7), Dashes: []vg.Length{vg.Points(3), vg.Points(2.5)}}, x0, yc, x1, yc)
		case entryHLine:
			c.StrokeLine2(draw.LineStyle{Color: e.col, Width: vg.Points(1.2)}, x0, yc, x1, yc)
		}
		if e.kind == entryNote {
			ns := l.noteStyle()
			ns.XAlign, ns.YAlign = draw.XLeft, draw.YCenter
			c.FillText(ns, vg.Point{X: x0, Y: yc}, e.label)
			continue
		}
		c.FillText(sty, vg.Point{X: x1 + l.gap, Y: yc}, e.label)
	}
}

func rect(x0, y0, x1, y1 vg.Length) []vg.Point {
	return []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

// legendRect is the legend's box in an inside corner of the data area.
func legendRect(dc draw.Canvas, place LegendPlacement, size vg.Point, fs vg.Length) vg.Rectangle {
	inset := fs * 0.6
	var x, y vg.Length // bottom-left
	switch place {
	case LegendTopRight, LegendBottomRight:
		x = dc.Max.X - inset - size.X
	default:
		x = dc.Min.X + inset
	}
	switch place {
	case LegendBottomLeft, LegendBottomRight:
		y = dc.Min.Y + inset
	default:
		y = dc.Max.Y - inset - size.Y
	}
	return vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + size.X, Y: y + size.Y}}
}

// pickCorner tries the inside corners in turn (top-left, top-right,
// bottom-right, bottom-left), each with the legend's box and a small
// safety margin around it: the first that cover finds clear (ok = true),
// else the one it scores least.
func pickCorner(dc draw.Canvas, size vg.Point, fs vg.Length, cover func(r vg.Rectangle) (score int, clear bool)) (place LegendPlacement, ok bool) {
	best, bestScore := LegendTopLeft, math.MaxInt
	for _, place := range []LegendPlacement{LegendTopLeft, LegendTopRight, LegendBottomRight, LegendBottomLeft} {
		r := legendRect(dc, place, size, fs)
		m := fs * 0.3
		r.Min.X, r.Min.Y, r.Max.X, r.Max.Y = r.Min.X-m, r.Min.Y-m, r.Max.X+m, r.Max.Y+m
		score, clear := cover(r)
		if clear {
			return place, true
		}
		if score < bestScore {
			best, bestScore = place, score
		}
	}
	return best, false
}

// autoPlace picks the first inside corner whose legend covers no median
// line, almost no band and at most a few raw points (ok = true); otherwise
// it returns the least covered corner and ok = false.
func (pc *prepared) autoPlace(p *plot.Plot, dc draw.Canvas, size vg.Point) (place LegendPlacement, ok bool) {
	trX, trY := p.Transforms(&dc)
	clampY := func(v float64) vg.Length {
		y := trY(v)
		return min(max(y, dc.Min.Y), dc.Max.Y)
	}
	allowedPts := max(3, pc.nPoints/100)
	return pickCorner(dc, size, pc.fs, func(r vg.Rectangle) (int, bool) {
		med, band, segs := pc.lineHits(r, trX, clampY)
		if h := pc.c.HLine; h != nil && finite(*h) && *h >= p.Y.Min && *h <= p.Y.Max {
			if y := trY(*h); y >= r.Min.Y && y <= r.Max.Y {
				med++
			}
		}
		pts := pc.pointHits(r, trX, trY)
		return med*10000 + band*100 + pts, med == 0 && band <= max(1, segs/50) && pts <= allowedPts
	})
}

// lineHits counts median segments and band pieces (the hull of the bands
// between neighbouring x values) whose bounding box meets r; segs is the
// number of band pieces.
func (pc *prepared) lineHits(r vg.Rectangle, trX func(float64) vg.Length, clampY func(float64) vg.Length) (med, band, segs int) {
	meets := func(x0, x1, y0, y1 vg.Length) bool {
		x0, x1 = min(x0, x1), max(x0, x1)
		return x1 >= r.Min.X && x0 <= r.Max.X && y1 >= r.Min.Y && y0 <= r.Max.Y
	}
	for i := range pc.series {
		s := &pc.series[i]
		var prevX, prevM, prevLo, prevHi vg.Length
		prevMOK, prevBOK := false, false
		for j, xv := range s.x {
			if !finite(xv) {
				prevMOK, prevBOK = false, false
				continue
			}
			x := trX(xv)
			v := s.valuesAt(j)
			if finite(v[0]) {
				y := clampY(v[0])
				x0, y0, y1 := x, y, y
				if prevMOK {
					x0, y0, y1 = prevX, min(y, prevM), max(y, prevM)
				}
				if meets(x0, x, y0, y1) {
					med++
				}
				prevM, prevMOK = y, true
			} else {
				prevMOK = false
			}
			lo, hi := vg.Length(math.Inf(1)), vg.Length(math.Inf(-1))
			for _, b := range v[1:] {
				if finite(b) {
					y := clampY(b)
					lo, hi = min(lo, y), max(hi, y)
				}
			}
			if lo <= hi {
				x0, y0, y1 := x, lo, hi
				if prevBOK {
					x0, y0, y1 = prevX, min(lo, prevLo), max(hi, prevHi)
				}
				segs++
				if meets(x0, x, y0, y1) {
					band++
				}
				prevLo, prevHi, prevBOK = lo, hi, true
			} else {
				prevBOK = false
			}
			prevX = x
		}
	}
	return med, band, segs
}

// pointHits counts the raw points inside r.
func (pc *prepared) pointHits(r vg.Rectangle, trX, trY func(float64) vg.Length) int {
	n := 0
	for i := range pc.series {
		s := &pc.series[i]
		for j := range s.px {
			x, y := trX(s.px[j]), trY(s.py[j])
			if x >= r.Min.X && x <= r.Max.X && y >= r.Min.Y && y <= r.Max.Y {
				n++
			}
		}
	}
	return n
}
