package spec

import (
	"testing"
)

// TestChainPlanSizeCountsEveryHop: a chain's cases are one per target
// and, for rr, per segment past the first, and the plan counts them.
func TestChainPlanSizeCountsEveryHop(t *testing.T) {
	s, err := Preset("seed002-hops")
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.PlanSize()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := s.Cases()
	if err != nil {
		t.Fatal(err)
	}
	n := len(cases) // expanded over the chain
	if n != 28 || z.Units != int64(n)*3 || z.Cells != int64(n)*3*3 {
		t.Errorf("%d chain cases; plan: %d units, %d cells, want %d and %d", n, z.Units, z.Cells, n*3, n*9)
	}
}
