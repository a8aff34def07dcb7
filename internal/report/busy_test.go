package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

// withLoad gives the run n cells whose outside work took pct % of the
// machine's CPU.
func withLoad(r Run, n int, pct float64) Run {
	for i := range n {
		out := pct / 100 * 4
		p := pct
		r.Meta.Cells = append(r.Meta.Cells, record.Cell{Index: i, Mode: r.Meta.Spec.Modes[i%len(r.Meta.Spec.Modes)],
			Load: &record.CellLoad{CPUSeconds: 4, BusySeconds: out + 1, OutsideSeconds: &out, OutsidePercent: &p}})
	}
	return r
}

// TestBusyRunIsSaid: a run measured beside other work says so in the
// summary, the report's text, its page and tables.json; a quiet one and
// one from before loads were recorded say nothing.
func TestBusyRunIsSaid(t *testing.T) {
	modes := []string{"bare", "overlay"}
	const want = "warning: the machine was busy during this run: work outside the run took 40.0 % of the machine's CPU (limit 10 %)"
	for _, c := range []struct {
		name string
		run  Run
		busy bool
	}{
		{"busy", withLoad(synthetic(modes, 300, 1), 6, 40), true},
		{"quiet", withLoad(synthetic(modes, 300, 1), 6, 2), false},
		{"no load recorded", synthetic(modes, 300, 1), false},
	} {
		var sum bytes.Buffer
		if err := Summary(&sum, c.run, "", true); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(sum.String(), want); got != c.busy {
			t.Errorf("%s: summary says busy %v, want %v:\n%s", c.name, got, c.busy, sum.String())
		}
		r, err := Build([]Run{c.run}, nil, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		r.WriteSummary(&text)
		if got := strings.Contains(text.String(), want); got != c.busy {
			t.Errorf("%s: report text says busy %v, want %v:\n%s", c.name, got, c.busy, text.String())
		}
		if got := len(r.Data.Warnings) == 1; got != c.busy {
			t.Errorf("%s: tables.json warnings %q", c.name, r.Data.Warnings)
		}
		page := filepath.Join(t.TempDir(), "r.html")
		if err := r.WriteHTML(page); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "Measured on a busy machine") && strings.Contains(string(b), "40.0 % of the machine"); got != c.busy {
			t.Errorf("%s: page says busy %v, want %v", c.name, got, c.busy)
		}
	}
}
