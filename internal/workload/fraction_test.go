package workload

import (
	"encoding/json"
	"math"
	"testing"
)

// A fraction is a number in (0, 1], as a spec (float64) or a run's JSON
// (json.Number) holds it; unset is fine.
func TestFraction(t *testing.T) {
	p := Param{Name: "coverage", Kind: Fraction}
	for _, c := range []struct {
		v  any
		ok bool
	}{
		{nil, true}, {0.1, true}, {1.0, true}, {json.Number("0.5"), true}, {int64(1), true},
		{0.0, false}, {-0.5, false}, {1.5, false}, {math.NaN(), false}, {"half", false}, {json.Number("2"), false},
	} {
		err := p.Validate(Params{"coverage": c.v}, "pingpong")
		if (err == nil) != c.ok {
			t.Errorf("%v: %v, want ok %v", c.v, err, c.ok)
		}
	}
	if v, ok := p.canonical(json.Number("0.25")); !ok || v != 0.25 {
		t.Errorf("canonical 0.25: %v %v", v, ok)
	}
}
