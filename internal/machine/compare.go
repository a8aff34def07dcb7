package machine

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Similarity is EasyCompare's s(i, j) = 1 − (1/m) Σₙ (1 − min(iₙ, jₙ) /
// max(iₙ, jₙ))² over the m features both profiles have: 1 for equal
// machines, towards 0 the more they differ. It is symmetric, and exactly 1
// for a profile with itself. With no feature in common it is NaN and m 0.
func Similarity(a, b Profile) (s float64, m int) {
	sum := 0.0
	for _, k := range FeatureKeys() {
		x, okA := a.Features[k]
		y, okB := b.Features[k]
		if !okA || !okB || !(x > 0) || !(y > 0) {
			continue
		}
		d := 1 - min(x, y)/max(x, y)
		sum += d * d
		m++
	}
	if m == 0 {
		return math.NaN(), 0
	}
	return 1 - sum/float64(m), m
}

// Matrix is the similarity of every pair of profiles.
type Matrix struct {
	Names    []string    `json:"names"`
	Values   [][]float64 `json:"-"`
	Features [][]int     `json:"features_compared"`
}

// Compare builds the matrix of ps.
func Compare(ps []Profile) Matrix {
	mx := Matrix{Names: make([]string, len(ps)), Values: make([][]float64, len(ps)), Features: make([][]int, len(ps))}
	for i, a := range ps {
		mx.Names[i] = a.Name
		mx.Values[i] = make([]float64, len(ps))
		mx.Features[i] = make([]int, len(ps))
		for j, b := range ps {
			mx.Values[i][j], mx.Features[i][j] = Similarity(a, b)
		}
	}
	return mx
}

// JSONValues is the matrix for JSON: null where no feature was shared.
func (mx Matrix) JSONValues() [][]*float64 {
	out := make([][]*float64, len(mx.Values))
	for i, row := range mx.Values {
		out[i] = make([]*float64, len(row))
		for j, v := range row {
			if !math.IsNaN(v) {
				out[i][j] = &v
			}
		}
	}
	return out
}

// Cell renders one similarity, "-" when the profiles share no feature.
func Cell(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.4f", v)
}

// WriteText prints the matrix as a table, the profiles numbered and named
// below it.
func (mx Matrix) WriteText(w io.Writer) {
	var b strings.Builder
	b.WriteString("similarity")
	for j := range mx.Names {
		fmt.Fprintf(&b, "  %8s", fmt.Sprintf("[%d]", j+1))
	}
	b.WriteString("\n")
	for i, row := range mx.Values {
		fmt.Fprintf(&b, "%-10s", fmt.Sprintf("[%d]", i+1))
		for _, v := range row {
			fmt.Fprintf(&b, "  %8s", Cell(v))
		}
		b.WriteString("\n")
	}
	for i, n := range mx.Names {
		fmt.Fprintf(&b, "[%d] %s\n", i+1, n)
	}
	io.WriteString(w, b.String())
}
