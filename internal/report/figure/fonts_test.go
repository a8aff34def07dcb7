package figure

import (
	"bytes"
	"encoding/base64"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// fontFaceCSS returns CSS @font-face rules that embed the Liberation Sans
// faces the charts use (regular and bold, as data: URLs, about 1.1 MB): what
// a page inlining several SVGs would include once instead of setting
// EmbedFonts on each chart. No page does today; TestFontFaceCSS keeps the
// faces extractable.
func fontFaceCSS() string {
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
	return b.String()
}
