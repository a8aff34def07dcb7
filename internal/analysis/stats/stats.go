// Package stats provides the small set of summary statistics cnperf reports.
//
// All functions treat their input as a sample of independent measurements.
// Empty input yields NaN rather than zero, so that "no data" can never be
// mistaken for a measured value. Inputs must not contain NaN: order
// statistics (Quantile, Median, Min, Max) are undefined for them.
package stats

import (
	"math"
	"slices"
)

// Quantile returns the p-quantile of sorted (ascending) using linear
// interpolation between order statistics, R's default quantile type 7:
//
//	h = (n-1)·p
//	Q = x[⌊h⌋] + (h-⌊h⌋)·(x[⌊h⌋+1] - x[⌊h⌋])
//
// sorted is not checked for order. Quantile returns NaN for empty input or
// a NaN p; p outside [0,1] is clamped to that interval (p<0 gives the
// minimum, p>1 the maximum). It never panics.
func Quantile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 || math.IsNaN(p) {
		return math.NaN()
	}
	p = math.Min(math.Max(p, 0), 1)
	h := float64(n-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i >= n-1 {
		return sorted[n-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// sortedCopy returns an ascending copy of xs.
func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// Median returns the median of xs (type-7 quantile at 0.5: the mean of the
// two middle values for even n). xs is not modified. NaN for empty input.
func Median(xs []float64) float64 {
	return Quantile(sortedCopy(xs), 0.5)
}

// Sum returns the sum of xs, NaN for empty input (nothing measured is not
// zero).
func Sum(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum
}

// Mean returns the arithmetic mean of xs, NaN for empty input.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return Sum(xs) / float64(len(xs))
}

// StdDev returns the sample standard deviation of xs (denominator n-1),
// computed in two passes for numerical stability. NaN for n < 2.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		d := x - m
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// Min returns the smallest value of xs, NaN for empty input.
func Min(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Min(xs)
}

// Max returns the largest value of xs, NaN for empty input.
func Max(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Max(xs)
}

// Ratio returns x/ref, or NaN when ref is 0 or either value is NaN.
func Ratio(x, ref float64) float64 {
	if ref == 0 || math.IsNaN(x) || math.IsNaN(ref) {
		return math.NaN()
	}
	return x / ref
}
