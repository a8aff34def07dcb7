package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/report/figure"
)

// TestGuidesAreCapped: a tiny receive window (an import's
// --receive-window 1) drew one dashed line per multiple: 11 s and a 173 MB
// page. At most maxGuides are drawn, and the page says they were thinned.
func TestGuidesAreCapped(t *testing.T) {
	tests := []struct {
		name    string
		window  int
		lo, hi  int  // guides per size figure; sizes reach almost 500000
		thinned bool // the notes and captions say so
	}{
		{"ppbench's default", 87380, 5, 5, false},
		{"one byte", 1, maxGuides - 1, maxGuides, true},
		{"at the cap", 500000 / 20, maxGuides - 1, maxGuides - 1, false},
		{"above the cap", 500000 / 25, 12, 12, true}, // 24 multiples: every 2nd
		{"window above the largest size", 1 << 30, 0, 0, false},
		{"max int", math.MaxInt, 0, 0, false},
		{"no window", 0, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := synthetic([]string{"bare", "overlay"}, 200, 9)
			run.Meta.ReceiveWindow = tc.window
			start := time.Now()
			r, err := Build([]Run{run}, nil, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Build took %v", d)
			}
			for _, f := range r.Figures {
				c, ok := f.Chart.(figure.Chart)
				if !ok || !strings.HasPrefix(f.ID, "fig-transfer") {
					continue
				}
				if len(c.VLines) < tc.lo || len(c.VLines) > tc.hi {
					t.Errorf("%s: %d guides, want %d..%d", f.ID, len(c.VLines), tc.lo, tc.hi)
				}
				for i := 1; i < len(c.VLines); i++ {
					if c.VLines[i] <= c.VLines[i-1] {
						t.Errorf("%s: guides not increasing: %v", f.ID, c.VLines)
					}
				}
				if got := strings.Contains(f.Caption, "thinned to at most"); got != tc.thinned {
					t.Errorf("%s: caption %q says thinned %v, want %v", f.ID, f.Caption, got, tc.thinned)
				}
			}
			if got := strings.Contains(strings.Join(r.Notes, "\n"), "guides are thinned"); got != tc.thinned {
				t.Errorf("notes %q say thinned %v, want %v", r.Notes, got, tc.thinned)
			}
		})
	}
}
