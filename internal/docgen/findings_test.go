package docgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report"
)

// storedRoot writes stored findings under a new root's FindingsDir.
func storedRoot(t *testing.T, files map[string]report.StoredFindings) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, FindingsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, st := range files {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The page judges a stored run on the claims the preset has now: a claim
// whose definition changed is stale, one the run lacks is not in it, a
// difference carries its explanation, a preset without a run says so;
// the README's tally counts cnperf's runs, not imported data.
func TestFindingsPage(t *testing.T) {
	f, err := os.Open("../../docs/findings/seed004.published.json")
	if err != nil {
		t.Fatal(err)
	}
	published, err := report.ReadStored(f, "published")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	run := published
	run.Imported, run.Run, run.Machine = "", "seed004 r-x", report.StoredMachine{CPU: "Some CPU", Cores: 2, Kernel: "6.1"}
	run.Changed, run.Busy = []string{"pingpong.coverage"}, "steal 9 %"
	run.Claims = append([]report.StoredClaim(nil), published.Claims...)
	run.Claims[0].Ratio, run.Claims[0].CI = ptr(0.41), &[2]float64{0.40, 0.42}                               // bridge-small differs
	run.Claims[0].OnVariant = &report.StoredInterval{Ratio: ptr(0.8), CI: &[2]float64{0.78, 0.82}, Units: 9} // and agrees on paper-link
	run.Claims[1].Metric = "latency"                                                                         // bridge-big: stale
	run.Claims = run.Claims[:4]                                                                              // encryption: not in the run
	// A socket test's claim is one row over its cases.
	cases := run
	cases.Preset, cases.Claims = "seed003", nil
	for _, c := range []struct {
		name  string
		ratio float64
	}{{"one server clients=1", 1.2}, {"one server clients=2", 1.6}} {
		cases.Claims = append(cases.Claims, report.StoredClaim{ID: "pipework-over-iptables-one-server", Metric: "throughput", Series: "veth-routed",
			Against: "bridge-routed", Test: "one server", Case: c.name, StoredInterval: report.StoredInterval{Ratio: ptr(c.ratio), CI: &[2]float64{c.ratio - 0.05, c.ratio + 0.05}, Units: 5}})
	}
	root := storedRoot(t, map[string]report.StoredFindings{"seed004.json": run, "seed004.published.json": published, "seed003.json": cases})
	page, err := FindingsPage(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Not run yet: `seed000` (15 claims), `seed001` (3 claims),",
		"**Kratzke 2015**: `seed004`, run seed004 r-x on Some CPU (2 cores, Linux 6.1)",
		"shortened or narrowed from the preset: pingpong.coverage, on a busy machine: steal 9 %",
		"| 0.75–0.9 | 0.844 [0.842, 0.845], agrees | 0.41 [0.400, 0.420] | DIFFERS | measured, on paper-link 0.8 [0.780, 0.820] (agrees) |",
		"| stale: the claim's metric changed since the run | re-run to judge | – |",
		"| `encryption` | Encrypting the overlay",
		"| not in this run | – | – |",
		"steal 9 %;\n`seed004`, the paper's data (imported from apachebench file logdata.csv",
		"| 0.99–1.45 | 2 cases, 1.2 [1.150, 1.250] (one server clients=1) to 1.6 [1.550, 1.650] (one server clients=2) | agrees 1, DIFFERS 1 | – |",
		"| 0.85–1.05 | 0.958 [0.943, 0.973], agrees | not in this run | – | – |", // encryption
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	count, err := FindingsCount(root)
	if err != nil {
		t.Fatal(err)
	}
	// overlay-small and overlay-big agree; bridge-small differs, explained.
	if !strings.HasPrefix(count, "Of the papers' 53 claims cnperf's stored runs find 2 agreeing, 1 differing with an explanation measured and 50 open") { // seed003's: open
		t.Errorf("count: %s", count)
	}
	quick := run
	quick.Preset = "quick"
	if _, err := FindingsPage(storedRoot(t, map[string]report.StoredFindings{"quick.json": quick})); err == nil || !strings.Contains(err.Error(), `docs/findings/quick.json: preset "quick" has no claims`) {
		t.Errorf("a preset without claims: %v", err)
	}
	bad := storedRoot(t, nil)
	os.WriteFile(filepath.Join(bad, FindingsDir, "x.json"), []byte(`{"format":"other"}`), 0o644)
	if _, err := FindingsPage(bad); err == nil || !strings.Contains(err.Error(), "findings docs/findings/x.json: format") {
		t.Errorf("a file that is not a summary: %v", err)
	}
}

func ptr(x float64) *float64 { return &x }

func TestExplanation(t *testing.T) {
	for in, want := range map[string]string{
		"measured: a faster network; on paper-link 0.84 [0.800, 0.880] (agrees)":       "measured, on paper-link 0.84 [0.800, 0.880] (agrees)",
		"not testable here (no such module): the kernel datapath":                      "not testable here",
		"untested: a faster network; this run has no bridge/paper (run variant paper)": "untested: no bridge/paper (run variant paper)",
	} {
		if got := explanation(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestLatestRunThatJudged: a claim's row and tally come from the latest
// run that judged it, so a later run narrowed to some tests updates their
// claims and leaves the others to the run before.
func TestLatestRunThatJudged(t *testing.T) {
	judged := []report.Rejudged{{Findings: []report.Finding{{}}}, {}}
	notJudged := []report.Rejudged{{}, {}}
	full := paperRun{file: "full", claims: []report.Rejudged{{Findings: []report.Finding{{}}}, {Findings: []report.Finding{{}}}}}
	narrowed := paperRun{file: "narrowed", claims: judged}
	imported := paperRun{file: "imported", stored: report.StoredFindings{Imported: "data.csv"}, claims: judged}
	for _, c := range []struct {
		runs     []paperRun
		claim    int
		imported bool
		want     string
	}{
		{[]paperRun{full, narrowed}, 0, false, "narrowed"},
		{[]paperRun{full, narrowed}, 1, false, "full"},
		{[]paperRun{narrowed, full}, 0, false, "full"},
		{[]paperRun{{file: "none", claims: notJudged}}, 1, false, "none"},
		{[]paperRun{full, imported}, 0, true, "imported"},
		{[]paperRun{imported}, 0, false, ""},
	} {
		got := ""
		if r := latest(c.runs, c.imported, c.claim); r != nil {
			got = r.file
		}
		if got != c.want {
			t.Errorf("runs %v, claim %d, imported %v: %q, want %q", c.runs, c.claim, c.imported, got, c.want)
		}
	}
}
