package machine

import (
	"math"
	"testing"
)

func prof(features map[string]float64) Profile {
	return Profile{Format: Format, Kind: Kind, Features: features}
}

func TestSimilarityWithItselfIsExactlyOne(t *testing.T) {
	p := prof(map[string]float64{"threads": 8, "processing_s": 1.234567, "memory_bytes": 33e9, "memory_bandwidth": 1.7e10,
		"disk_read": 2.1e9, "disk_write": 9.9e8, "network": 4.2e10})
	if s, m := Similarity(p, p); s != 1 || m != 7 {
		t.Errorf("Similarity(p, p) = %v over %d features, want exactly 1 over 7", s, m)
	}
}

func TestSimilarityFormula(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b map[string]float64
		want float64
		m    int
	}{
		{"one feature, half", map[string]float64{"threads": 4}, map[string]float64{"threads": 8}, 1 - 0.25, 1},
		{"time-like as it is", map[string]float64{"processing_s": 2}, map[string]float64{"processing_s": 1}, 0.75, 1},
		{"two features, one equal", map[string]float64{"threads": 4, "network": 10}, map[string]float64{"threads": 4, "network": 5}, 1 - 0.25/2, 2},
		{"mean over m", map[string]float64{"threads": 1, "disk_read": 1, "disk_write": 1}, map[string]float64{"threads": 4, "disk_read": 2, "disk_write": 1},
			1 - (0.75*0.75+0.25)/3, 3},
		{"only shared features", map[string]float64{"threads": 2, "network": 1}, map[string]float64{"threads": 2, "disk_read": 9}, 1, 1},
		{"nothing shared", map[string]float64{"threads": 2}, map[string]float64{"network": 2}, math.NaN(), 0},
		{"far apart tends to 0", map[string]float64{"threads": 1}, map[string]float64{"threads": 1e12}, 0, 1},
	} {
		s, m := Similarity(prof(tc.a), prof(tc.b))
		r, rm := Similarity(prof(tc.b), prof(tc.a))
		if m != tc.m || rm != m {
			t.Errorf("%s: compared %d and %d features, want %d", tc.name, m, rm, tc.m)
		}
		if math.IsNaN(tc.want) {
			if !math.IsNaN(s) || !math.IsNaN(r) {
				t.Errorf("%s: s = %v, %v, want NaN", tc.name, s, r)
			}
			continue
		}
		if math.Abs(s-tc.want) > 1e-9 || s != r {
			t.Errorf("%s: s = %v (reversed %v), want %v, symmetric", tc.name, s, r, tc.want)
		}
	}
}

func TestCompareMatrix(t *testing.T) {
	a := prof(map[string]float64{"threads": 4})
	b := prof(map[string]float64{"threads": 2})
	a.Name, b.Name = "a", "b"
	mx := Compare([]Profile{a, b})
	if mx.Values[0][0] != 1 || mx.Values[1][1] != 1 || mx.Values[0][1] != 0.75 || mx.Values[1][0] != 0.75 {
		t.Errorf("matrix = %v", mx.Values)
	}
	if v := mx.JSONValues(); *v[0][1] != 0.75 {
		t.Errorf("JSON values = %v", v)
	}
}
