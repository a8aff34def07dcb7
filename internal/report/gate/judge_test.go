package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGather: the limits of a file and of the flags add up, the change
// allowed comes from the flag, else the file, else the default, and
// nothing to judge by is refused in the flags' words.
func TestGather(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "limits.yaml")
	if err := os.WriteFile(file, []byte("max_cost: [bridge:transfer=25]\nmax_change: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	three := 3.0
	for _, tc := range []struct {
		name      string
		costs     []string
		file      string
		baselines []string
		change    *float64
		limits    int
		max       float64
		err       string
	}{
		{"flags only", []string{"bridge:latency=30"}, "", nil, nil, 1, DefaultMaxChange, ""},
		{"file then flags", []string{"bridge:latency=30"}, file, nil, nil, 2, 7, ""},
		{"the flag's change wins", nil, file, []string{"old"}, &three, 1, 3, ""},
		{"baselines alone", nil, "", []string{"old"}, nil, 0, DefaultMaxChange, ""},
		{"nothing", nil, "", nil, &three, 0, 0, "nothing to check: give --max-cost, --limits or --baseline"},
		{"malformed limit", []string{"bridge=10"}, "", nil, nil, 0, 0, "want MODE:METRIC=PCT"},
		{"no such file", nil, filepath.Join(dir, "nope.yaml"), nil, nil, 0, 0, "limits file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Gather(tc.costs, tc.file, tc.baselines, tc.change)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || len(c.Limits) != tc.limits || c.MaxChange != tc.max {
				t.Errorf("Gather = %+v, %v; want %d limits, max change %g", c, err, tc.limits, tc.max)
			}
		})
	}
}

func TestTally(t *testing.T) {
	r := func(vs ...Verdict) []Result {
		var rs []Result
		for _, v := range vs {
			rs = append(rs, Result{Verdict: v})
		}
		return rs
	}
	for _, tc := range []struct {
		rs   []Result
		want Verdict
		why  string
	}{
		{nil, Holds, ""},
		{r(Holds, Holds), Holds, ""},
		{r(Holds, CannotTell, CannotTell), CannotTell, "the run cannot tell 2 of 3 limits"},
		{r(CannotTell, Broken, Holds), Broken, "1 of 3 limits broken"},
	} {
		if v, why := Tally(tc.rs, "limits", "broken"); v != tc.want || why != tc.why {
			t.Errorf("Tally(%v) = %v, %q; want %v, %q", tc.rs, v, why, tc.want, tc.why)
		}
	}
}
