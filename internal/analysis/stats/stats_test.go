package stats

import (
	"math"
	"slices"
	"testing"
)

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

func TestQuantile(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 0.5, nan},
		{"single p0", []float64{7}, 0, 7},
		{"single p0.5", []float64{7}, 0.5, 7},
		{"single p1", []float64{7}, 1, 7},
		{"1234 p0", []float64{1, 2, 3, 4}, 0, 1},
		{"1234 p0.25", []float64{1, 2, 3, 4}, 0.25, 1.75},
		{"1234 p0.5", []float64{1, 2, 3, 4}, 0.5, 2.5},
		{"1234 p0.75", []float64{1, 2, 3, 4}, 0.75, 3.25},
		{"1234 p0.9", []float64{1, 2, 3, 4}, 0.9, 3.7},
		{"1234 p1", []float64{1, 2, 3, 4}, 1, 4},
		// R: quantile(c(10,20,30,40,50), 0.05) = 12
		{"5 values p0.05", []float64{10, 20, 30, 40, 50}, 0.05, 12},
		{"5 values p0.95", []float64{10, 20, 30, 40, 50}, 0.95, 48},
		{"clamp below", []float64{1, 2, 3, 4}, -0.5, 1},
		{"clamp above", []float64{1, 2, 3, 4}, 1.5, 4},
		{"NaN p", []float64{1, 2, 3, 4}, nan, nan},
		{"ties", []float64{5, 5, 5}, 0.3, 5},
		// sorted 2 4 4 4 5 5 7 9; h=7p
		{"8 values p0.05", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 0.05, 2 + 0.35*2}, // h=0.35
		{"8 values p0.25", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 0.25, 4},          // h=1.75 between 4 and 4
		{"8 values p0.75", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 0.75, 5.5},        // h=5.25: 5 + 0.25*2
		{"8 values p0.95", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 0.95, 7 + 0.65*2}, // h=6.65
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quantile(tt.xs, tt.p); !near(got, tt.want) {
				t.Errorf("Quantile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty", nil, math.NaN()},
		{"single", []float64{3}, 3},
		{"odd unsorted", []float64{9, 1, 5}, 5},
		{"even unsorted", []float64{4, 1, 3, 2}, 2.5},
		{"negative", []float64{-1, -3, -2}, -2},
		{"even with ties", []float64{9, 2, 5, 4, 7, 4, 5, 4}, 4.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.xs)
			if got := Median(in); !near(got, tt.want) {
				t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
			}
			if !slices.Equal(in, tt.xs) {
				t.Errorf("Median modified its input: %v", in)
			}
		})
	}
}

func TestMoments(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name                       string
		xs                         []float64
		mean, sd, minimum, maximum float64
	}{
		{"empty", nil, nan, nan, nan, nan},
		{"single", []float64{42}, 42, nan, 42, 42},
		{"two", []float64{1, 3}, 2, math.Sqrt2, 1, 3},
		{"classic", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 2.138089935299395, 2, 9},
		// large offset: naive one-pass formula loses precision here
		{"offset", []float64{1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16}, 1e9 + 10, math.Sqrt(30), 1e9 + 4, 1e9 + 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Mean(tt.xs); !near(got, tt.mean) {
				t.Errorf("Mean = %v, want %v", got, tt.mean)
			}
			if got := StdDev(tt.xs); !near(got, tt.sd) {
				t.Errorf("StdDev = %v, want %v", got, tt.sd)
			}
			if got := Min(tt.xs); !near(got, tt.minimum) {
				t.Errorf("Min = %v, want %v", got, tt.minimum)
			}
			if got := Max(tt.xs); !near(got, tt.maximum) {
				t.Errorf("Max = %v, want %v", got, tt.maximum)
			}
		})
	}
}

func TestRatio(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		x, ref, want float64
	}{
		{3, 4, 0.75},
		{0, 4, 0},
		{3, 0, nan},
		{0, 0, nan},
		{nan, 4, nan},
		{3, nan, nan},
		{-2, 4, -0.5},
	}
	for _, tt := range tests {
		if got := Ratio(tt.x, tt.ref); !near(got, tt.want) {
			t.Errorf("Ratio(%v, %v) = %v, want %v", tt.x, tt.ref, got, tt.want)
		}
	}
}
