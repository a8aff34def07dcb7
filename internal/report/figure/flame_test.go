package figure

import (
	"bytes"
	"encoding/xml"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func flameTree() *FlameNode {
	grey := color.NRGBA{0xd8, 0xd8, 0xd8, 0xff}
	leaf := func(name string, v float64) *FlameNode {
		return &FlameNode{Name: name, Value: v, Tooltip: name + " <" + name + ">", Fill: grey}
	}
	kernel := leaf("nf_hook_slow_[k]", 30)
	kernel.Children = []*FlameNode{leaf("ipt_do_table_[k]", 20)}
	server := leaf("server", 60)
	server.Children = []*FlameNode{kernel, leaf("a_frame_with_a_name_longer_than_any_rectangle_it_is_drawn_in_could_ever_hold_"+strings.Repeat("x", 200), 0.2)}
	root := leaf("all", 100)
	root.Children = []*FlameNode{server, leaf("idle", 40)}
	return root
}

func TestFlameSVGAndPNG(t *testing.T) {
	for name, tc := range map[string]struct {
		root  *FlameNode
		rects int
		rows  int
		err   bool
	}{
		"tree":       {root: flameTree(), rects: 6, rows: 4},
		"root alone": {root: &FlameNode{Name: "all", Value: 1, Tooltip: "all"}, rects: 1, rows: 1},
		"no root":    {err: true},
		"zero width": {root: &FlameNode{Name: "all"}, err: true},
	} {
		t.Run(name, func(t *testing.T) {
			f := Flame{Root: tc.root}
			svg, err := f.SVG(7*vg.Inch, 0)
			if tc.err {
				if err == nil {
					t.Fatal("drew a flame graph without a positive root")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Height float64 `xml:"height,attr"`
				G      []struct {
					Title string `xml:"title"`
					Rect  struct {
						X     float64 `xml:"x,attr"`
						Width float64 `xml:"width,attr"`
					} `xml:"rect"`
					Text string `xml:"text"`
				} `xml:"g"`
			}
			if err := xml.Unmarshal(svg, &doc); err != nil {
				t.Fatalf("not XML: %v\n%s", err, svg)
			}
			if len(doc.G) != tc.rects || doc.Height != float64(tc.rows*flameRow) {
				t.Fatalf("%d frames, height %v; want %d, %d rows", len(doc.G), doc.Height, tc.rects, tc.rows)
			}
			full := doc.G[0].Rect.Width
			for _, g := range doc.G {
				// A name is drawn only as far as its rectangle holds it.
				if w := float64(len([]rune(g.Text))) * flameCharW; w > g.Rect.Width {
					t.Errorf("%q (%.0f points) overflows its %.1f-point frame", g.Text, w, g.Rect.Width)
				}
				if !strings.HasPrefix(g.Title, strings.TrimSuffix(g.Text, "..")) {
					t.Errorf("frame %q titled %q", g.Text, g.Title)
				}
			}
			if tc.rects == 6 {
				// ipt_do_table: 20 of 100, right above nf_hook_slow (at server's left edge).
				if g := doc.G[3]; g.Rect.X != 0 || g.Rect.Width != full/5 || g.Title != "ipt_do_table_[k] <ipt_do_table_[k]>" {
					t.Errorf("ipt_do_table drawn at %v, %v wide, titled %q; want 0, %v", g.Rect.X, g.Rect.Width, g.Title, full/5)
				}
				if idle := doc.G[5]; idle.Rect.X != full*0.6 || idle.Text != "idle" {
					t.Errorf("idle at %v (%q); want %v", idle.Rect.X, idle.Text, full*0.6)
				}
				if doc.G[4].Text != "" {
					t.Errorf("a 0.2 %% frame is labelled %q", doc.G[4].Text)
				}
			}
			b, err := f.PNG(7*vg.Inch, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if got := img.Bounds().Dx(); got != 700 {
				t.Errorf("PNG %d pixels wide, want 700", got)
			}
		})
	}
}
