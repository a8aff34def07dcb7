package run

import (
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/record"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/spec"
)

// specWith returns a spec whose size plan has exactly sizes sizes.
func specWith(ms []string, chunk, sizes int) spec.Spec {
	s := spec.Default()
	s.Name = "t"
	s.Modes = ms
	s.PingPong.Chunk = chunk
	s.PingPong.MinSize, s.PingPong.MaxSize, s.PingPong.Coverage = 1, max(sizes, 1), 1
	if sizes == 0 {
		s.PingPong.Coverage = 0
	}
	return s
}

func TestPlanExample(t *testing.T) {
	// 3 modes, 7 sizes, chunk 3: chunks {0,1,2}, {3,4,5}, {6}.
	got := interleave([]string{"a", "b", "c"}, 3, 1)
	want := []cellPlan{
		{"a", 0, 0}, {"b", 0, 0}, {"c", 0, 0},
		{"b", 1, 0}, {"c", 1, 0}, {"a", 1, 0},
		{"c", 2, 0}, {"a", 2, 0}, {"b", 2, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("plan has %d cells, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cell %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// With instances, unit k runs on the same instance (k mod instances) in
// every mode, so instances carry alike units in every mode.
func TestPlanInstances(t *testing.T) {
	got := interleave([]string{"a", "b"}, 4, 3)
	want := []cellPlan{
		{"a", 0, 0}, {"b", 0, 0},
		{"b", 1, 1}, {"a", 1, 1},
		{"a", 2, 2}, {"b", 2, 2},
		{"b", 3, 0}, {"a", 3, 0},
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan = %v, want %v", got, want)
	}
}

func TestPlanProperties(t *testing.T) {
	five := drivers.Catalog().ModeNames()
	tests := []struct {
		modes  []string
		sizes  int
		chunk  int
		chunks int
	}{
		{[]string{"bare", "host", "bridge"}, 7, 3, 3},
		{[]string{"bare", "host", "bridge"}, 6, 3, 2},
		{[]string{"bare", "host", "bridge"}, 1, 3, 1},
		{[]string{"bare", "host", "bridge"}, 3, 1, 3},
		{[]string{"bare"}, 10, 4, 3},
		{[]string{"bare", "overlay"}, 20, 5, 4},
		{five, 5000, 50, 100},
		{five, 49, 50, 1},
		{five, 51, 50, 2},
		{five, 0, 50, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d modes %d sizes chunk %d", len(tc.modes), tc.sizes, tc.chunk), func(t *testing.T) {
			pp := newPingPong(specWith(tc.modes, tc.chunk, tc.sizes))
			cells := interleave(tc.modes, pp.units(), 1)
			n := len(tc.modes)
			if len(cells) != tc.chunks*n {
				t.Fatalf("%d cells, want %d chunks × %d modes = %d", len(cells), tc.chunks, n, tc.chunks*n)
			}
			seen := map[cellPlan]int{}
			for i, c := range cells {
				seen[c]++
				// Chunk k occupies cells [k*n, (k+1)*n): every cell of chunk
				// k comes before every cell of chunk k+1.
				if c.unit != i/n {
					t.Errorf("cell %d has chunk %d, want %d", i, c.unit, i/n)
				}
				// Rotation: chunk k starts with Modes[k % n] and keeps the
				// spec's cyclic order.
				if want := tc.modes[(c.unit+i%n)%n]; c.mode != want {
					t.Errorf("cell %d (chunk %d) mode %s, want %s", i, c.unit, c.mode, want)
				}
			}
			for k := 0; k < tc.chunks; k++ {
				for _, m := range tc.modes {
					if seen[cellPlan{m, k, 0}] != 1 {
						t.Errorf("(mode %s, chunk %d) planned %d times, want once", m, k, seen[cellPlan{m, k, 0}])
					}
				}
				if first := cells[k*n].mode; first != tc.modes[k%n] {
					t.Errorf("chunk %d starts with %s, want %s", k, first, tc.modes[k%n])
				}
			}
			// Every size lands in exactly one chunk, in order, as runCell
			// slices them: the chunks put back together are the plan.
			var joined []int
			for k := 0; k < tc.chunks; k++ {
				c := pp.chunk(k)
				if len(c) == 0 || len(c) > tc.chunk {
					t.Errorf("chunk %d has %d sizes, want 1..%d", k, len(c), tc.chunk)
				}
				joined = append(joined, c...)
			}
			if !slices.Equal(joined, pp.sizes) || len(joined) != tc.sizes {
				t.Errorf("chunks cover %d sizes %v, want the plan's %d %v", len(joined), joined, tc.sizes, pp.sizes)
			}
			if c := pp.chunk(tc.chunks); len(c) != 0 {
				t.Errorf("chunk %d past the last has %d sizes", tc.chunks, len(c))
			}
		})
	}
}

func TestNewID(t *testing.T) {
	re := regexp.MustCompile(`^r[a-z0-9]{4}$`)
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		id := record.NewID("r")
		if len(id) != 5 || !re.MatchString(id) {
			t.Fatalf("NewID(r) = %q, want r and 4 of [a-z0-9]", id)
		}
		for _, m := range drivers.Catalog().ModeNames() {
			cat := drivers.Catalog()
			for _, d := range cat.Drivers {
				if err := lab.ValidName(labName(id, driverTag(cat, d), m, "cores=1,router=apart", spec.MaxInstances-1)); err != nil {
					t.Fatalf("lab name for id %q, mode %s on %s: %v", id, m, d.Name(), err)
				}
			}
		}
		seen[id] = true
	}
	// 200 draws from 36^4 ids: a handful of collisions at most.
	if len(seen) < 190 {
		t.Errorf("only %d distinct ids in 200 draws", len(seen))
	}
}
