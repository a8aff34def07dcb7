package report

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report/importer"
	"github.com/cnperf/cnperf/internal/spec"
)

// findingsRun imports an ab file of bare and bridge under two variants,
// lab and paper: bridge keeps lab of bare's transfer rate on lab and
// paper on paper, give or take 1 % per row, 10 rows per size.
func findingsRun(t *testing.T, lab, paper float64) Run {
	t.Helper()
	var csv strings.Builder
	csv.WriteString("Tag,Document Length,Complete requests,Failed requests,Concurrency Level,Time per request\n")
	for rep := range 10 {
		for _, size := range []int{10, 100, 1000, 10000} {
			for _, tag := range []struct {
				name string
				f    float64
			}{{"bare/lab", 1}, {"bridge/lab", lab}, {"bare/paper", 1}, {"bridge/paper", paper}} {
				noise := 1 + 0.01*math.Sin(float64(rep*7+size+len(tag.name)))
				fmt.Fprintf(&csv, "%s,%d,1000,0,1,%.4f\n", tag.name, size, (1+float64(size)/1e4)/tag.f*noise)
			}
		}
	}
	samples, info, err := importer.ApacheBench(strings.NewReader(csv.String()), "ab.csv")
	if err != nil {
		t.Fatal(err)
	}
	info.Reference = "bare/lab"
	dir := filepath.Join(t.TempDir(), "run")
	if err := importer.WriteRun(dir, samples, info, ""); err != nil {
		t.Fatal(err)
	}
	run, err := ReadRun(dir, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func claim(lo, hi float64, explain *spec.Explanation) spec.Claim {
	return spec.Claim{ID: "c", Says: "s", Source: "Fig. 1", Metric: "transfer", Series: "bridge/lab", Against: "bare/lab",
		Ratio: []*float64{&lo, &hi}, Explain: explain}
}

// A claim agrees, differs or cannot tell by where its range lies from
// the ratio's interval; a differing claim's explanation is measured when
// the same claim agrees on the variant, refuted when it still differs.
func TestFindings(t *testing.T) {
	run := findingsRun(t, 0.6, 0.85)
	variant := &spec.Explanation{Because: "the paper's condition", Variant: "paper"}
	for _, c := range []struct {
		claim   spec.Claim
		verdict Agreement
		more    bool
		explain string
	}{
		{claim(0.55, 0.65, nil), Agrees, false, ""},
		{claim(0.8, 0.9, variant), Differs, false, "measured: the paper's condition; on paper 0.85"},
		{claim(0.9, 1, variant), Differs, false, "refuted: the paper's condition; on paper 0.85"},
		{claim(0.9, 1, &spec.Explanation{Because: "b", Untestable: "no such kernel module"}), Differs, false, "not testable here (no such kernel module): b"},
		{claim(0.6, 0.7, variant), Undecided, true, ""},
	} {
		fs, err := Findings(run, []spec.Claim{c.claim}, 2)
		if err != nil {
			t.Fatal(err)
		}
		f := fs[0]
		if f.Verdict != c.verdict || (f.More > 0) != c.more || !strings.HasPrefix(f.Explained, c.explain) || (c.explain == "") != (f.Explained == "") {
			t.Errorf("%v: %s, more %d, explained %q; want %s, %q", c.claim.Ratio, f.Line(), f.More, f.Explained, c.verdict, c.explain)
		}
	}
	c := claim(0.5, 1, nil)
	c.Series = "overlay/lab"
	if _, err := Findings(run, []spec.Claim{claim(0.5, 1, nil), c}, 2); err == nil || !strings.HasPrefix(err.Error(), "claims[1].series") {
		t.Errorf("a series the run lacks: %v", err)
	}
}

// A run whose spec carries claims ends its summary with the verdict
// table and its page with the same table; a run without claims shows
// neither.
func TestFindingsShown(t *testing.T) {
	run := findingsRun(t, 0.6, 0.85)
	var plain bytes.Buffer
	if err := Summary(&plain, run, "", false); err != nil {
		t.Fatal(err)
	}
	run.Meta.Spec.Claims = []spec.Claim{claim(0.55, 0.65, nil)}
	var out bytes.Buffer
	if err := Summary(&out, run, "", false); err != nil {
		t.Fatal(err)
	}
	table := strings.TrimPrefix(out.String(), plain.String())
	if strings.Contains(plain.String(), "findings") || !strings.HasPrefix(table, "\nThe paper's findings") || !strings.Contains(table, "c      bridge/lab over bare/lab, transfer  0.55–0.65 (Fig. 1)  0.6 [0.598, 0.602]  agrees") {
		t.Errorf("summary's table:\n%s", table)
	}
	r, err := Build([]Run{run}, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if ts := r.Tables[len(r.Tables)-1]; ts.ID != "tab-findings" || ts.Rows[0][6].Text != "agrees" {
		t.Errorf("page's last table: %+v", ts)
	}
}
