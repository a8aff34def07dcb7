package gate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/gate/gatetest"
)

// busy gives every cell of the run in dir a load: outside work on pct % of
// the machine's CPU.
func busy(t *testing.T, dir string, pct float64) {
	t.Helper()
	path := filepath.Join(dir, record.MetaFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var meta record.Meta
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	for i := range meta.Cells {
		out, p := pct/100*4, pct
		meta.Cells[i].Load = &record.CellLoad{CPUSeconds: 4, BusySeconds: 1 + out, OutsideSeconds: &out, OutsidePercent: &p}
	}
	if b, err = json.Marshal(meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDisturbed(t *testing.T) {
	quiet := gatetest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 })
	calm := gatetest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 })
	busy(t, calm, 3)
	loaded := gatetest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 })
	busy(t, loaded, 45)
	for _, c := range []struct {
		name  string
		dirs  []string
		limit string
		want  Verdict
		says  string
	}{
		{"quiet, no load recorded: holds", []string{quiet}, "bridge:transfer=25", Holds, ""},
		{"quiet, load recorded: broken", []string{calm}, "bridge:transfer=10", Broken, ""},
		{"busy: holds becomes cannot tell", []string{loaded}, "bridge:transfer=25", CannotTell, "within the limit 25.0 %; but " + loaded + " was measured on a busy machine: work outside the run took 45.0 % of the machine's CPU (limit 10 %)"},
		{"busy: broken becomes cannot tell", []string{loaded}, "bridge:transfer=10", CannotTell, "beyond the limit"},
		{"busy baseline", []string{calm, loaded}, "bridge:transfer=25", CannotTell, loaded + " was measured on a busy machine"},
		{"busy run against itself", []string{loaded, loaded}, "bridge:transfer=25", CannotTell, "past a limit in 40 of 40 stretches of cells"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, err := Load(c.dirs[0])
			if err != nil {
				t.Fatal(err)
			}
			l, _ := ParseLimit(c.limit)
			rs, err := JudgeLimits(run, []Limit{l})
			if err != nil {
				t.Fatal(err)
			}
			rs, err = Disturbed(rs, c.dirs...)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || rs[0].Verdict != c.want {
				t.Fatalf("got %+v, want %s", rs, c.want)
			}
			if !strings.HasPrefix(rs[0].Line, c.want.String()) || !strings.Contains(rs[0].Line, c.says) {
				t.Errorf("line %q: want it to start with %q and say %q", rs[0].Line, c.want, c.says)
			}
			if n := strings.Count(rs[0].Line, "busy machine"); n > 1 {
				t.Errorf("line %q names a busy run %d times", rs[0].Line, n)
			}
		})
	}
	if _, err := Disturbed(nil, t.TempDir()); err == nil {
		t.Error("a directory that is not a run must be refused")
	}
}
