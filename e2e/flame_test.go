package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/testutil"
)

// TestProfiledReportInChromium opens the report of a stored profiled run
// (real stacks, internal/report/testdata/profiled-rr) in headless Chromium:
// its flame graphs must render without console errors, every frame with a
// tooltip, and its stacks export as folded text.
func TestProfiledReportInChromium(t *testing.T) {
	browser := chromium(t)
	bin := testutil.Binary(t)
	run, err := filepath.Abs(filepath.Join("..", "internal", "report", "testdata", "profiled-rr"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	html := filepath.Join(tmp, "report.html")
	if out, err := exec.Command(bin, "report", run, "-o", html).CombinedOutput(); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	found, problems, shot := browse(t, browser, html, filepath.Join(tmp, "chromium"), `(() => {
		const n = s => document.querySelectorAll(s).length;
		const w = s => { const e = document.querySelector(s); return e ? Math.round(e.getBoundingClientRect().width) : 0; };
		return {
			flames: n("figure[id^='fig-flame-'] svg.flame"), diffs: n("figure[id^='fig-flamediff-'] svg.flame"),
			frames: n("svg.flame g > rect"), titled: n("svg.flame g > title"), labels: n("svg.flame g > text"),
			navLinks: n("nav a[href^='#fig-flame']"), width: w("#fig-flame-0 svg"),
		};
	})()`, "#fig-flame-0")
	if found["flames"] != 2 || found["diffs"] != 1 || found["navLinks"] != 3 || found["width"] < 400 {
		t.Errorf("page: %v", found)
	}
	if found["frames"] < 20 || found["titled"] != found["frames"] || found["labels"] == 0 {
		t.Errorf("frames: %v", found)
	}
	if len(problems) > 0 {
		t.Errorf("browser errors: %v", problems)
	}
	if len(shot) < 5000 {
		t.Errorf("screenshot of the flame graph is %d bytes: nothing drawn?", len(shot))
	}

	dir := filepath.Join(tmp, "stacks")
	out, err := exec.Command(bin, "export", run, "--stacks", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("export --stacks: %v\n%s", err, out)
	}
	for _, series := range []string{"bare", "bridge"} {
		b, err := os.ReadFile(filepath.Join(dir, series+".folded"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			stack, count, ok := strings.Cut(line, " ")
			if !ok || strings.Contains(count, " ") || !strings.Contains(stack, ";") {
				t.Errorf("%s.folded: %q is not FRAME;...;FRAME COUNT", series, line)
				break
			}
		}
	}
}
