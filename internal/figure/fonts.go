package figure

import (
	"bytes"
	"encoding/base64"
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

var (
	fontCSSOnce sync.Once
	fontCSS     string
)

// FontFaceCSS returns CSS @font-face rules that embed the Liberation Sans
// faces the charts use (regular and bold, as data: URLs, about 1.1 MB).
// An HTML page that inlines several SVGs can include it once in a <style>
// element instead of setting Chart.EmbedFonts on each chart; without it
// browsers fall back to the metric-compatible Arial or Helvetica.
func FontFaceCSS() string {
	fontCSSOnce.Do(func() {
		var b strings.Builder
		for _, bold := range []bool{false, true} {
			sty := textStyle(vg.Points(10), bold, black)
			face := plot.DefaultTextHandler.Cache().Lookup(sty.Font, sty.Font.Size)
			var raw bytes.Buffer
			if _, err := face.Face.WriteSourceTo(nil, &raw); err != nil {
				continue
			}
			weight := "normal"
			if bold {
				weight = "bold"
			}
			b.WriteString("@font-face{font-family:'Liberation Sans';font-style:normal;font-weight:")
			b.WriteString(weight)
			b.WriteString(";src:url(data:font/ttf;base64,")
			b.WriteString(base64.StdEncoding.EncodeToString(raw.Bytes()))
			b.WriteString(") format('truetype');}\n")
		}
		fontCSS = b.String()
	})
	return fontCSS
}
