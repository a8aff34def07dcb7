package grid

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histograms hold operation times in nanoseconds, 1 ns to 60 s, with 3
// significant digits, as rr's round trips.
const (
	histLowest  = 1
	histHighest = int64(60 * time.Second)
	histDigits  = 3
)

func newHist() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// record adds one operation's time, clamped into the histogram's range.
func record(h *hdr.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(int64(d), histLowest), histHighest))
}

func us(ns int64) float64 { return float64(ns) / 1e3 }

// latency summarises h in microseconds; zero when h is empty.
func latency(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{Min: us(h.Min()), Mean: h.Mean() / 1e3, P50: us(h.ValueAtQuantile(50)), P90: us(h.ValueAtQuantile(90)),
		P99: us(h.ValueAtQuantile(99)), P999: us(h.ValueAtQuantile(99.9)), Max: us(h.Max())}
}
