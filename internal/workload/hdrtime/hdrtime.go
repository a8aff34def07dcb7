// Package hdrtime keeps operation times in HDR histograms and summarises
// them, as the rr (round trips) and grid (puts, removes) clients report
// them.
package hdrtime

import (
	"fmt"
	"io"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histograms hold times in nanoseconds, 1 ns to 60 s, with 3 significant
// digits (a 20 µs round trip is known to ±16 ns).
const (
	lowest  = 1
	highest = int64(60 * time.Second)
	digits  = 3
)

// New makes an empty histogram.
func New() *hdr.Histogram { return hdr.New(lowest, highest, digits) }

// Record adds one time, clamped into the histogram's range.
func Record(h *hdr.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(int64(d), lowest), highest))
}

// US is ns nanoseconds in microseconds.
func US(ns int64) float64 { return float64(ns) / 1e3 }

// Summary is a histogram's distribution in microseconds.
type Summary struct {
	Min, Mean, P50, P90, P99, P999, Max float64
}

// Summarise summarises h; zero when h is empty.
func Summarise(h *hdr.Histogram) Summary {
	if h.TotalCount() == 0 {
		return Summary{}
	}
	return Summary{Min: US(h.Min()), Mean: h.Mean() / 1e3, P50: US(h.ValueAtQuantile(50)), P90: US(h.ValueAtQuantile(90)),
		P99: US(h.ValueAtQuantile(99)), P999: US(h.ValueAtQuantile(99.9)), Max: US(h.Max())}
}

// Row is one line of a Table: a distribution and its name.
type Row struct {
	Name string
	Summary
}

// Table prints distributions, a row each, under a header of their columns
// (µs), the names in a column width wide.
func Table(w io.Writer, width int, rows ...Row) {
	fmt.Fprintf(w, "%-*s %9s %9s %9s %9s %9s %9s %9s\n", width, "µs", "min", "mean", "p50", "p90", "p99", "p99.9", "max")
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", width, r.Name, r.Min, r.Mean, r.P50, r.P90, r.P99, r.P999, r.Max)
	}
}
