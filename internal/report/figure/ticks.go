package figure

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// niceTicks is a plot.Ticker with major ticks at every multiple of a nice
// step (1, 2, 2.5 or 5 × 10^k) and unlabelled minor ticks between them.
type niceTicks struct {
	step    float64
	minor   int // minor intervals per major interval (0 or 1: none)
	percent bool
}

var _ plot.Ticker = niceTicks{}

// Ticks implements plot.Ticker.
func (t niceTicks) Ticks(min, max float64) []plot.Tick {
	if !(t.step > 0) || !finite(min) || !finite(max) || max < min {
		return nil
	}
	sub := t.step
	if t.minor > 1 {
		sub = t.step / float64(t.minor)
	}
	eps := sub * 1e-9
	first := math.Ceil((min - eps) / sub)
	last := math.Floor((max + eps) / sub)
	if last-first > 10000 {
		return nil
	}
	var ticks []plot.Tick
	for k := first; k <= last; k++ {
		v := k * sub
		if v == 0 {
			v = 0 // no -0
		}
		if t.minor > 1 && math.Mod(math.Abs(k), float64(t.minor)) != 0 {
			ticks = append(ticks, plot.Tick{Value: v})
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v, t.step, t.percent)})
	}
	return ticks
}

// tickLabel formats v with as many decimals as the step needs.
func tickLabel(v, step float64, percent bool) string {
	if percent {
		v *= 100
		step *= 100
	}
	dec := decimals(step)
	// Round to the step's precision so 0.30000000000000004 prints as 0.3.
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if s[0] == '-' && strings.Trim(s[1:], "0.") == "" { // "-0", "-0.00": no minus zero
		s = s[1:]
	}
	if percent {
		s += " %"
	}
	return s
}

// decimals is the number of decimals needed to print multiples of step.
func decimals(step float64) int {
	for d := 0; d < 12; d++ {
		s := step * math.Pow10(d)
		if math.Abs(s-math.Round(s)) < 1e-6*math.Max(1, s) {
			return d
		}
	}
	return 12
}

// niceSteps lists candidate steps from small to large around the range.
func niceSteps(span float64) []float64 {
	if !(span > 0) || !finite(span) {
		return []float64{1}
	}
	e := math.Floor(math.Log10(span)) - 3
	var steps []float64
	for k := e; k <= e+5; k++ {
		p := math.Pow(10, k)
		for _, m := range []float64{1, 2, 2.5, 5} {
			steps = append(steps, m*p)
		}
	}
	return steps
}

// minorFor gives the number of minor intervals for a step.
func minorFor(step float64) int {
	if m := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9)); math.Abs(m-2.5) < 1e-6 {
		return 5 // 0.5 minor steps
	}
	return 2 // 1 → 0.5, 2 → 1, 5 → 2.5
}

// chooseStep returns the smallest nice step whose labels do not crowd an
// axis of the given length: horizontally, neighbouring labels keep a gap of
// about one em (and ticks at least 36 pt apart); vertically, ticks are at
// least three font heights apart.
func chooseStep(min, max float64, length vg.Length, horizontal, percent bool, sty text.Style) float64 {
	span := max - min
	steps := niceSteps(span)
	em := sty.Font.Size
	for _, st := range steps {
		n := span / st // intervals
		if n > 40 {
			continue
		}
		spacing := length / vg.Length(math.Max(n, 1e-9))
		if horizontal {
			var w vg.Length
			for _, tk := range (niceTicks{step: st, percent: percent}).Ticks(min, max) {
				if tw := sty.Width(tk.Label); tw > w {
					w = tw
				}
			}
			if spacing >= w+em && spacing >= vg.Points(36) {
				return st
			}
		} else if spacing >= 3*em && spacing >= vg.Points(22) {
			return st
		}
	}
	return steps[len(steps)-1]
}

// niceCeil rounds v up to a multiple of step.
func niceCeil(v, step float64) float64 {
	return math.Ceil(v/step-1e-9) * step
}

// niceFloor rounds v down to a multiple of step.
func niceFloor(v, step float64) float64 {
	return math.Floor(v/step+1e-9) * step
}

// logScale is a log axis that, unlike plot.LogScale, does not panic on a
// value at or below 0: it maps it to NaN, which nothing draws.
type logScale struct{}

var _ plot.Normalizer = logScale{}

// Normalize implements plot.Normalizer.
func (logScale) Normalize(min, max, x float64) float64 {
	if !(min > 0 && max > min && x > 0) {
		return math.NaN()
	}
	return math.Log(x/min) / math.Log(max/min)
}

// logTicks is a plot.Ticker for a log axis: a labelled major tick at every
// power of ten and unlabelled minor ticks at 2…9 times it. An axis that
// holds fewer than two powers of ten labels 2× and 5× too.
type logTicks struct{}

var _ plot.Ticker = logTicks{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !finite(max) || max < min {
		return nil
	}
	lo, hi := int(math.Floor(math.Log10(min)+1e-9)), int(math.Ceil(math.Log10(max)-1e-9))
	if hi-lo > 300 {
		return nil
	}
	majors := 0
	for k := lo; k <= hi; k++ {
		if v := math.Pow(10, float64(k)); v >= min*(1-1e-9) && v <= max*(1+1e-9) {
			majors++
		}
	}
	var ticks []plot.Tick
	for k := lo; k <= hi; k++ {
		p := math.Pow(10, float64(k))
		for m := 1; m <= 9; m++ {
			v := float64(m) * p
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (majors < 2 && (m == 2 || m == 5)) {
				t.Label = tickLabel(v, p, false)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// decadeFloor is the largest power of ten at or below v (v > 0).
func decadeFloor(v float64) float64 { return math.Pow(10, math.Floor(math.Log10(v)+1e-9)) }

// decadeCeil is the smallest power of ten at or above v (v > 0).
func decadeCeil(v float64) float64 { return math.Pow(10, math.Ceil(math.Log10(v)-1e-9)) }
