package report

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
)

// A run's cases are read alike whatever it measured: a sweep of message
// sizes is one case holding its sweep, a run of other workloads one case
// per test and swept value; intervals, drivers and instances take either.
func TestRunCasesOfEachKind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sweeps bool
	}{{"pingpong", true}, {"sockets", false}} {
		t.Run(tc.name, func(t *testing.T) {
			runs, notes := Load([]string{filepath.Join("testdata", "before-reorganisation", tc.name)})
			if len(runs) != 1 {
				t.Fatalf("Load: %v", notes)
			}
			run := runs[0]
			if run.Sweeps() != tc.sweeps {
				t.Fatalf("Sweeps() = %v, want %v", run.Sweeps(), tc.sweeps)
			}
			ref := run.Meta.Spec.ReferenceKey()
			cases := RunCases(run, ref, DefaultOptions().Same)
			if tc.sweeps && (len(cases) != 1 || cases[0].Sweep == nil || cases[0].Label != "") {
				t.Fatalf("a sweep gives one case holding it: %d cases", len(cases))
			}
			if !tc.sweeps && (len(cases) < 2 || slices.ContainsFunc(cases, func(c analysis.Case) bool { return c.Sweep != nil })) {
				t.Fatalf("a run of other workloads gives a case per test and value, none a sweep: %d cases", len(cases))
			}
			cis := RunIntervals(run, ref, DefaultOptions().Same)
			if len(cis) == 0 {
				t.Fatal("no intervals")
			}
			for _, ci := range cis {
				if ci.Mode == ref || (ci.Case == "") != tc.sweeps {
					t.Errorf("interval %s %q: against itself, or of the wrong kind of case", ci.Mode, ci.Case)
				}
			}
		})
	}
}
