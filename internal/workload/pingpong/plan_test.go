package pingpong

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

func TestPlanValidate(t *testing.T) {
	ok := PlanConfig{Min: 1, Max: 10, Coverage: 0.5, Repetitions: 1}
	tests := []struct {
		name string
		mod  func(*PlanConfig)
		want string
	}{
		{"ok", func(*PlanConfig) {}, ""},
		{"min==max", func(c *PlanConfig) { c.Min, c.Max = 7, 7 }, ""},
		{"coverage 1", func(c *PlanConfig) { c.Coverage = 1 }, ""},
		{"negative min", func(c *PlanConfig) { c.Min = -1 }, "min_size must be >= 0"},
		{"max<min", func(c *PlanConfig) { c.Max = 0 }, "max_size must be >= min_size"},
		{"coverage 0", func(c *PlanConfig) { c.Coverage = 0 }, "coverage must be in (0, 1]"},
		{"coverage >1", func(c *PlanConfig) { c.Coverage = 1.01 }, "coverage must be in (0, 1]"},
		{"coverage <0", func(c *PlanConfig) { c.Coverage = -0.5 }, "coverage must be in (0, 1]"},
		{"coverage NaN", func(c *PlanConfig) { c.Coverage = math.NaN() }, "coverage must be in (0, 1]"},
		{"repetitions 0", func(c *PlanConfig) { c.Repetitions = 0 }, "repetitions must be in 1..100000"},
		{"repetitions 2^62", func(c *PlanConfig) { c.Repetitions = 1 << 62 }, "repetitions must be in 1..100000"},
		{"repetitions at the bound", func(c *PlanConfig) { c.Repetitions = MaxRepetitions }, ""},
		{"max at pong's limit", func(c *PlanConfig) { c.Max, c.Coverage = MaxSizeLimit, 1e-6 }, ""},
		{"max above pong's limit", func(c *PlanConfig) { c.Max = MaxSizeLimit + 1 }, "max_size must be at most 4294967296 (pong's largest body)"},
		{"max MaxInt", func(c *PlanConfig) { c.Max = math.MaxInt }, "max_size must be at most 4294967296 (pong's largest body)"},
		{"sizes at the bound", func(c *PlanConfig) { c.Min, c.Max, c.Coverage = 0, 2_000_000, 0.5 }, ""},
		{"one size too many", func(c *PlanConfig) { c.Min, c.Max, c.Coverage = 0, 1_000_000, 1 },
			"coverage draws 1000001 sizes from [min_size, max_size]: at most 1000000"},
	}
	for _, tt := range tests {
		c := ok
		tt.mod(&c)
		err := c.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: Validate() = %q, want %q", tt.name, got, tt.want)
		}
		if tt.want != "" && c.Sizes() != nil {
			t.Errorf("%s: Sizes() of an invalid config is not nil", tt.name)
		}
	}
}

func TestPlanSizes(t *testing.T) {
	tests := []struct {
		name string
		cfg  PlanConfig
		want int // distinct sizes expected
	}{
		{"sparse", PlanConfig{Min: 1, Max: 500000, Coverage: 0.01}, 5000},
		{"dense", PlanConfig{Min: 100, Max: 199, Coverage: 0.75}, 75},
		{"full", PlanConfig{Min: 0, Max: 99, Coverage: 1}, 100},
		{"tiny coverage gives one", PlanConfig{Min: 0, Max: 9, Coverage: 0.01}, 1},
		{"single size", PlanConfig{Min: 42, Max: 42, Coverage: 1}, 1},
		{"floor", PlanConfig{Min: 1, Max: 10, Coverage: 0.35}, 3},
		// A huge range must not allocate per slot: this would need GiBs.
		{"huge range", PlanConfig{Min: 0, Max: MaxSizeLimit, Coverage: 1e-6}, 4294},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Repetitions, tt.cfg.Seed = 1, 7
			if c := tt.cfg.Count(); c != tt.want {
				t.Errorf("Count() = %d, want %d", c, tt.want)
			}
			s := tt.cfg.Sizes()
			if len(s) != tt.want {
				t.Fatalf("%d sizes, want %d", len(s), tt.want)
			}
			seen := make(map[int]bool, len(s))
			for _, v := range s {
				if v < tt.cfg.Min || v > tt.cfg.Max {
					t.Fatalf("size %d outside [%d, %d]", v, tt.cfg.Min, tt.cfg.Max)
				}
				if seen[v] {
					t.Fatalf("size %d drawn twice", v)
				}
				seen[v] = true
			}
			if len(s) > 10 && slices.IsSorted(s) {
				t.Errorf("sizes come out sorted; want random order")
			}
			if !reflect.DeepEqual(s, tt.cfg.Sizes()) {
				t.Errorf("same seed, different plan")
			}
			if len(s) > 10 {
				other := tt.cfg
				other.Seed++
				if reflect.DeepEqual(s, other.Sizes()) {
					t.Errorf("seeds %d and %d give the same plan", tt.cfg.Seed, other.Seed)
				}
			}
		})
	}
}

// TestPlanUniform checks both draw paths are uniform over the range and over
// positions (a biased Floyd order would show up in position 0).
func TestPlanUniform(t *testing.T) {
	for _, cov := range []float64{0.3, 0.6} { // k=3 sparse path, k=6 dense path
		const width, trials = 10, 20000
		var any, first [width]int
		k := 0
		for seed := int64(0); seed < trials; seed++ {
			s := PlanConfig{Min: 0, Max: width - 1, Coverage: cov, Repetitions: 1, Seed: seed}.Sizes()
			k = len(s)
			for _, v := range s {
				any[v]++
			}
			first[s[0]]++
		}
		wantAny := float64(trials*k) / width
		wantFirst := float64(trials) / width
		for v := 0; v < width; v++ {
			if math.Abs(float64(any[v])-wantAny) > 0.06*wantAny {
				t.Errorf("coverage %v: size %d drawn %d times, want ~%.0f", cov, v, any[v], wantAny)
			}
			if math.Abs(float64(first[v])-wantFirst) > 0.1*wantFirst {
				t.Errorf("coverage %v: size %d first %d times, want ~%.0f", cov, v, first[v], wantFirst)
			}
		}
	}
}
