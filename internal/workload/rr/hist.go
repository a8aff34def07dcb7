package rr

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histograms hold round trips in nanoseconds, 1 ns to 60 s, with 3
// significant digits (a 20 µs round trip is known to ±16 ns).
const (
	histLowest  = 1
	histHighest = int64(60 * time.Second)
	histDigits  = 3
	maxBuckets  = 200
)

func newHist() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// record adds one round trip, clamping it into the histogram's range.
func record(h *hdr.Histogram, d time.Duration) {
	v := int64(d)
	if v < histLowest {
		v = histLowest
	} else if v > histHighest {
		v = histHighest
	}
	_ = h.RecordValue(v)
}

func us(ns int64) float64 { return float64(ns) / 1e3 }

// latency summarises h in microseconds; zero when h is empty.
func latency(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Min:  us(h.Min()),
		Mean: h.Mean() / 1e3,
		P50:  us(h.ValueAtQuantile(50)),
		P90:  us(h.ValueAtQuantile(90)),
		P99:  us(h.ValueAtQuantile(99)),
		P999: us(h.ValueAtQuantile(99.9)),
		Max:  us(h.Max()),
	}
}

// buckets returns h's percentile distribution at HDR's percentile ticks,
// with as many ticks per halving distance as keep it within maxBuckets.
func buckets(h *hdr.Histogram) []Bucket {
	if h.TotalCount() == 0 {
		return nil
	}
	var br []hdr.Bracket
	for _, ticks := range []int32{5, 2, 1} {
		br = h.CumulativeDistributionWithTicks(ticks)
		if len(br) <= maxBuckets {
			break
		}
	}
	if len(br) > maxBuckets { // keep the head and the tail
		br = append(br[:maxBuckets/2:maxBuckets/2], br[len(br)-maxBuckets/2:]...)
	}
	out := make([]Bucket, len(br))
	for i, b := range br {
		out[i] = Bucket{ValueUS: us(b.ValueAt), Percentile: b.Quantile, Count: b.Count}
	}
	return out
}
