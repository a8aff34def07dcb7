package rr

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cnperf/cnperf/internal/workload/hdrtime"
)

// maxBuckets bounds the distribution a result carries.
const maxBuckets = 200

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
		out[i] = Bucket{ValueUS: hdrtime.US(b.ValueAt), Percentile: b.Quantile, Count: b.Count}
	}
	return out
}
