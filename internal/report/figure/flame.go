package figure

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// FlameNode is one frame of a flame graph: its name, its width in any
// unit (samples, CPU seconds per request), the tooltip the page shows
// over it, its fill, and the frames it called, drawn left to right in
// order. A node's children are at most as wide as it together; what is
// left is its own time.
type FlameNode struct {
	Name     string
	Value    float64
	Tooltip  string
	Fill     color.NRGBA
	Children []*FlameNode
}

// Flame is a flame graph (Brendan Gregg's): the root at the bottom, each
// frame above the frame that called it, as wide as its share of the
// root. It draws every node it is given: the caller bounds the tree.
type Flame struct {
	Root *FlameNode
}

// Flame geometry, in points: a row per stack depth, names clipped to
// their frame's width at about flameCharW a character.
const (
	flameRow   = 16
	flameFont  = 10
	flameCharW = 6
	flamePad   = 3
)

// flameSVGScale widens the SVG's drawing against the width asked for: the
// page scales a figure to its column (about 980 pixels), where a 7-inch
// drawing's 10-point names would come out twice as large as the tables'.
const flameSVGScale = 2

// flameRect is a node placed: x and width in points, row from the bottom.
type flameRect struct {
	n      *FlameNode
	x, w   float64
	row    int
	labelN int // characters of the name that fit (0: none)
}

// layout places every node of a positive-width tree within width points.
func (f Flame) layout(width float64) ([]flameRect, int, error) {
	if f.Root == nil || !(f.Root.Value > 0) || math.IsInf(f.Root.Value, 0) {
		return nil, 0, fmt.Errorf("figure: a flame graph needs a root of positive width")
	}
	scale := width / f.Root.Value
	var out []flameRect
	rows := 0
	var place func(n *FlameNode, x float64, row int)
	place = func(n *FlameNode, x float64, row int) {
		w := n.Value * scale
		label := 0
		if fit := int((w - 2*flamePad) / flameCharW); fit >= 3 {
			label = fit
		}
		out = append(out, flameRect{n: n, x: x, w: w, row: row, labelN: label})
		rows = max(rows, row+1)
		for _, c := range n.Children {
			place(c, x, row+1)
			x += c.Value * scale
		}
	}
	place(f.Root, 0, 0)
	return out, rows, nil
}

// clip is name cut to n characters, ".." marking the cut.
func clip(name string, n int) string {
	r := []rune(name)
	if len(r) <= n {
		return name
	}
	return string(r[:n-2]) + ".."
}

func hexColour(c color.NRGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// SVG renders the flame graph width wide; its height follows from the
// deepest stack (height is ignored). Each frame is a rectangle with its
// name clipped to fit and a <title> the browser shows as a tooltip: no
// script, so the page stays static.
func (f Flame) SVG(width, _ vg.Length) ([]byte, error) {
	w := flameSVGScale * width.Points()
	rects, rows, err := f.layout(w)
	if err != nil {
		return nil, err
	}
	h := float64(rows * flameRow)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="flame" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="%d">`, w, h, w, h, flameFont)
	// Scoped to the graph: the page inlines every figure's SVG.
	b.WriteString("\n<style>svg.flame rect { stroke: #fff; stroke-width: 0.5; }</style>\n")
	for _, r := range rects {
		y := h - float64((r.row+1)*flameRow)
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.1f" y="%.0f" width="%.1f" height="%d" fill="%s"/>`,
			html.EscapeString(r.n.Tooltip), r.x, y, r.w, flameRow, hexColour(r.n.Fill))
		if r.labelN > 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f">%s</text>`, r.x+flamePad, y+flameRow-4.5, html.EscapeString(clip(r.n.Name, r.labelN)))
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.Bytes(), nil
}

// PNG renders the same rectangles and names width wide at dpi; the height
// follows from the deepest stack, as in SVG.
func (f Flame) PNG(width, _ vg.Length, dpi int) ([]byte, error) {
	rects, rows, err := f.layout(width.Points())
	if err != nil {
		return nil, err
	}
	height := vg.Length(max(rows*flameRow, 54))
	return renderPNG(width, height, dpi, func() (drawer, error) { return flameDrawer(rects), nil })
}

type flameDrawer []flameRect

func (rs flameDrawer) draw(c draw.Canvas) {
	sty := textStyle(flameFont, false, color.Black)
	for _, r := range rs {
		x0, y0 := c.Min.X+vg.Length(r.x), c.Min.Y+vg.Length(r.row*flameRow)
		box := vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x0 + vg.Length(r.w), Y: y0 + flameRow - 0.5}}
		c.SetColor(r.n.Fill)
		c.Fill(box.Path())
		if r.labelN > 0 {
			c.FillText(sty, vg.Point{X: x0 + flamePad, Y: y0 + 4}, clip(r.n.Name, r.labelN))
		}
	}
}
