package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/report/gate/gatetest"
)

// check's exit codes on runs built for each case: bridge costs 20 % of
// bare's transfer rate, steadily.
func TestCheckExitCodes(t *testing.T) {
	run := gatetest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 })
	slower := gatetest.WriteRun(t, 21, 1, func(int) float64 { return 0.6 })
	dir := t.TempDir()
	limits := filepath.Join(dir, "limits.yaml")
	if err := os.WriteFile(limits, []byte("max_cost: [bridge:transfer=25, bridge:latency=30]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "check.xml")
	for _, c := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"holds", []string{run, "--max-cost", "bridge:transfer=25"}, ExitOK, "holds       bridge:transfer=25: cost 19.6 %"}, // each of the 38 sizes one point
		{"limits file", []string{run, "--limits", limits}, ExitOK, "bridge:latency=30"},
		{"broken", []string{run, "--max-cost", "bridge:transfer=25", "--max-cost", "bridge:transfer=10"}, ExitFailure, "BROKEN"},
		{"cannot tell", []string{run, "--max-cost", "bridge:transfer=20", "--junit", junit}, ExitCannotTell, "straddles the limit 20.0 %"},
		{"baseline holds", []string{run, "--baseline", run}, ExitOK, "bridge:transfer: no change from the baseline, 95 % CI"},
		{"baseline says what it could see", []string{run, "--baseline", run}, ExitOK, "could detect changes of "},
		{"baseline better, in words", []string{run, "--baseline", slower}, ExitOK, "% better than the baseline"},
		{"three baselines", []string{run, "--baseline", run, "--baseline", run, "--baseline", run}, ExitOK, "bridge:transfer: no change from the 3 baselines, 95 % CI"},
		{"three baselines, one slower", []string{slower, "--baseline", run, "--baseline", run, "--baseline", run}, ExitFailure, "BROKEN      bridge:transfer: "},
		{"baseline broken", []string{slower, "--baseline", run}, ExitFailure, "BROKEN"},
		{"no such mode", []string{run, "--max-cost", "overlay:transfer=10"}, ExitUsage, ""},
		{"no such metric", []string{run, "--max-cost", "bridge:jitter=10"}, ExitUsage, ""},
		{"malformed limit", []string{run, "--max-cost", "bridge=10"}, ExitUsage, ""},
		{"not a run", []string{dir, "--max-cost", "bridge:transfer=10"}, ExitUsage, ""},
		{"nothing to check", []string{run}, ExitUsage, ""},
		{"max-change NaN", []string{run, "--baseline", run, "--max-change", "NaN"}, ExitUsage, ""},
		{"max-change Inf", []string{run, "--baseline", run, "--max-change", "Inf"}, ExitUsage, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(drivers.Catalog(), append([]string{"check"}, c.args...), &out, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), c.out) {
				t.Errorf("stdout lacks %q:\n%s", c.out, out.String())
			}
			if c.code == ExitUsage && strings.Count(errb.String(), "\n") != 1 {
				t.Errorf("bad input: want one line, got %q", errb.String())
			}
		})
	}
	b, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(b), "<skipped message=") {
		t.Errorf("JUnit of the run that cannot tell: %v\n%s", err, b)
	}
}
