package pingpong

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// PlanConfig describes which message sizes a run covers. ppbench samples
// sizes at random from a range instead of stepping through it, so a run can
// cover a wide range at a fraction of the cost and drift is not confounded
// with size.
type PlanConfig struct {
	Min, Max    int     // inclusive size range in bytes
	Coverage    float64 // fraction of the range to draw, in (0, 1]
	Repetitions int     // requests per drawn size
	Seed        int64   // same seed, same plan
}

// Plan bounds: a plan's memory is O(sizes), and its requests must be
// countable in an int.
const (
	MaxPlanSizes   = 1_000_000 // distinct sizes in one plan
	MaxRepetitions = 100_000   // requests per size
)

// Validate reports the first invalid field, named as in the run spec.
func (c PlanConfig) Validate() error {
	switch {
	case c.Min < 0:
		return errors.New("min_size must be >= 0")
	case c.Max < c.Min:
		return errors.New("max_size must be >= min_size")
	case c.Max > MaxSizeLimit:
		return fmt.Errorf("max_size must be at most %d (pong's largest body)", MaxSizeLimit)
	case !(c.Coverage > 0 && c.Coverage <= 1): // also rejects NaN
		return errors.New("coverage must be in (0, 1]")
	case c.Repetitions < 1 || c.Repetitions > MaxRepetitions:
		return fmt.Errorf("repetitions must be in 1..%d", MaxRepetitions)
	case c.Count() > MaxPlanSizes:
		return fmt.Errorf("coverage draws %d sizes from [min_size, max_size]: at most %d", c.Count(), MaxPlanSizes)
	}
	return nil
}

// Count is the number of distinct sizes Sizes draws:
// max(1, floor((Max-Min+1) × Coverage)), capped at the range width.
func (c PlanConfig) Count() int {
	if c.Max < c.Min || c.Min < 0 {
		return 0
	}
	width := uint64(c.Max-c.Min) + 1 // no overflow: both are >= 0
	f := math.Floor(float64(width) * c.Coverage)
	k := uint64(1)
	if f >= 1 {
		k = uint64(f)
	}
	if k > width || math.IsNaN(f) {
		k = width
	}
	return int(k)
}

// Sizes draws Count() distinct sizes uniformly from [Min, Max] in random
// order. It returns nil for an invalid config. Memory is O(Count()), never
// O(Max-Min): a run over [0, 16 MiB] at 1 % coverage must stay small.
func (c PlanConfig) Sizes() []int {
	if c.Validate() != nil {
		return nil
	}
	k := c.Count()
	width := uint64(c.Max-c.Min) + 1
	// PCG seeded from Seed only: reproducible across runs and platforms.
	rng := rand.New(rand.NewPCG(uint64(c.Seed), 0x9e3779b97f4a7c15))
	out := make([]int, 0, k)
	if uint64(k)*2 >= width {
		// Dense: a partial Fisher–Yates over the range costs at most 2k slots.
		all := make([]int, width)
		for i := range all {
			all[i] = c.Min + i
		}
		for i := 0; i < k; i++ {
			j := i + int(rng.Uint64N(width-uint64(i)))
			all[i], all[j] = all[j], all[i]
		}
		return append(out, all[:k]...)
	}
	// Sparse: Floyd's algorithm draws k distinct values with k draws and a
	// k-entry set; its output order is biased, so shuffle afterwards.
	seen := make(map[uint64]struct{}, k)
	for j := width - uint64(k); j < width; j++ {
		t := rng.Uint64N(j + 1)
		if _, dup := seen[t]; dup {
			t = j
		}
		seen[t] = struct{}{}
		out = append(out, c.Min+int(t))
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Request is one planned /mping call.
type Request struct {
	Size int // message size in bytes
	Rep  int // repetition index of this size, from 0
}
