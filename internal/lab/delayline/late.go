package delayline

import (
	"math/bits"
	"time"
)

// lateHist counts how late frames left against their due time, in
// buckets of a quarter octave (about 19 % wide) from 1 ns to an hour:
// fixed size, no allocation per frame, quantiles to within a bucket.
type lateHist struct {
	counts [4 * 64]uint64
	n      uint64
	max    int64
}

// bucket returns the bucket of v ns: 4 per power of two, from the two
// bits below the leading one.
func bucket(v int64) int {
	if v < 4 {
		return int(max(v, 0))
	}
	u := uint64(v)
	l := bits.Len64(u) // >= 3
	return 4*(l-1) + int(u>>(l-3)&3)
}

// bucketTop returns the largest value in bucket b.
func bucketTop(b int) int64 {
	if b < 8 { // 4..7 are never used: values below 4 have their own
		return int64(min(b, 3))
	}
	l := b/4 + 1
	return int64((uint64(4|b%4)+1)<<(l-3)) - 1
}

func (h *lateHist) add(v int64) {
	v = max(v, 0)
	h.counts[bucket(v)]++
	h.n++
	h.max = max(h.max, v)
}

func (h *lateHist) merge(o *lateHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the top of the bucket that holds the q-quantile (0 when
// empty), at most the largest value seen.
func (h *lateHist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n-1)) + 1
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(bucketTop(b), h.max))
		}
	}
	return time.Duration(h.max)
}
