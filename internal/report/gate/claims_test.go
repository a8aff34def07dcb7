package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report/gate/gatetest"
)

// Claims judged on a run (bridge at 80 % of bare) hold when they agree
// and break when they differ; a run from a busy machine keeps its
// verdicts and says so beside each; a run without claims, or claims on a
// series the run lacks, are bad input.
func TestJudgeClaims(t *testing.T) {
	quiet := gatetest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 })
	loaded := gatetest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 })
	busy(t, loaded, 45)
	file := filepath.Join(t.TempDir(), "claims.yaml")
	if err := os.WriteFile(file, []byte(`name: c
modes: [bare, bridge]
claims:
  - {id: keeps, says: s, source: f, metric: transfer, series: bridge, ratio: [0.75, 0.85]}
  - {id: faster, says: s, source: f, metric: latency, series: bridge, ratio: [null, 1]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	note := func(string) {}
	rs, stored, err := JudgeClaims(quiet, file, note)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Preset != "c" || stored.Busy != "" || len(stored.Claims) != 2 || stored.Claims[0].Against != "bare" {
		t.Errorf("stored %+v", stored)
	}
	if v, why := Tally(rs, "claims", "differ"); len(rs) != 2 || rs[0].Verdict != Holds || rs[1].Verdict != Broken || v != Broken || why != "1 of 2 claims differ" {
		t.Errorf("%+v: %v %s", rs, v, why)
	}
	rs, stored, err = JudgeClaims(loaded, file, note)
	if err != nil || stored.Busy == "" || rs[0].Verdict != Holds || !strings.Contains(rs[0].Line, "agrees") || !strings.Contains(rs[0].Line, "; but "+loaded+" was measured on a busy machine") {
		t.Errorf("busy: %v %+v", err, rs)
	}
	if _, _, err := JudgeClaims(quiet, ClaimsOfRun, note); err == nil || !strings.Contains(err.Error(), "has no claims") {
		t.Errorf("no claims: %v", err)
	}
	if _, _, err := JudgeClaims(quiet, "seed004", note); err == nil || !strings.Contains(err.Error(), "claims[0].series") {
		t.Errorf("a preset's claims on series the run lacks: %v", err)
	}
}
