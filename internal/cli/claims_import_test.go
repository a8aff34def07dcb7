package cli

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/spec"
)

// The paper's own data agrees with the paper's claims as the presets
// encode them: Kratzke's (2015) published apachebench data (testdata's
// README names it), imported with its tags named as the presets' series,
// judged against every claim of seed004 and seed004-zones. A claim
// encoded wrong (a range, a size split, a series) fails here.
func TestPublishedDataAgreesWithClaims(t *testing.T) {
	csv := unzipped(t, "testdata/kratzke2015/logdata.csv.gz")
	for _, c := range []struct {
		preset string
		series []string
		claims []string
	}{
		{"seed004", []string{"Reference=bare/lab", "Docker=bridge/lab", "Docker+SDN=overlay-userspace/lab", "Docker+SDN+Encrypted=overlay-encrypted/lab"},
			[]string{"bridge-small", "bridge-big", "overlay-small", "overlay-big", "encryption"}},
		{"seed004-zones", []string{"Reference=bare/one-zone", "Cross+Zone=bare/cross-zone", "Cross+Regional=bare/cross-region"},
			[]string{"cross-zone", "cross-region-small", "cross-region-big"}},
	} {
		t.Run(c.preset, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			args := []string{"import", "--format", "ab", csv, "-o", dir}
			for _, s := range c.series {
				args = append(args, "--series", s)
			}
			cnperf(t, ExitOK, args...)
			junit, saved := filepath.Join(t.TempDir(), "claims.xml"), filepath.Join(t.TempDir(), "findings.json")
			out := cnperf(t, ExitOK, "check", dir, "--claims", c.preset, "--junit", junit, "--save", saved)
			for _, id := range c.claims {
				if !strings.Contains(out, "agrees      "+id+": ") {
					t.Errorf("claim %s does not agree:\n%s", id, out)
				}
			}
			if n := strings.Count(out, "\n"); n != len(c.claims) {
				t.Errorf("%d verdicts, want %d:\n%s", n, len(c.claims), out)
			}
			if x, err := os.ReadFile(junit); err != nil || !strings.Contains(string(x), fmt.Sprintf(`tests="%d" failures="0" skipped="0"`, len(c.claims))) {
				t.Errorf("junit: %v\n%s", err, x)
			}
			// The stored findings judge alike without the run.
			f, err := os.Open(saved)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, err := report.ReadStored(f, saved)
			if err != nil || st.Preset != c.preset || st.Imported == "" || len(st.Claims) != len(c.claims) {
				t.Fatalf("stored: %v %+v", err, st)
			}
			s, _ := spec.Preset(c.preset)
			for _, r := range report.Rejudge(st, report.ResolveClaims(s)) {
				if len(r.Findings) != 1 || r.Findings[0].Verdict != report.Agrees {
					t.Errorf("stored %s: %+v", r.Claim.ID, r)
				}
			}
		})
	}
}

// A claim the data contradicts differs (exit 1); one it cannot decide
// cannot tell (exit 3) and says how much more data would; one naming a
// series the run lacks is bad input naming the claim's field.
func TestClaimsVerdicts(t *testing.T) {
	csv := unzipped(t, "testdata/kratzke2015/logdata.csv.gz")
	dir := filepath.Join(t.TempDir(), "run")
	cnperf(t, ExitOK, "import", "--format", "ab", csv, "-o", dir, "--series", "Reference=bare", "--series", "Docker=bridge")
	spec := func(ratio string) string {
		f := filepath.Join(t.TempDir(), "claims.yaml")
		doc := "name: c\nmodes: [bare, bridge]\nclaims:\n  - {id: c, says: x, source: y, metric: transfer, series: bridge, sizes: [10, 99999], ratio: " + ratio + "}\n"
		if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if out := cnperf(t, ExitFailure, "check", dir, "--claims", spec("[0.90, null]")); !strings.Contains(out, "DIFFERS     c: bridge over bare, transfer 0.844") {
		t.Errorf("differs: %s", out)
	}
	if out := cnperf(t, ExitCannotTell, "check", dir, "--claims", spec("[null, 0.844]")); !strings.Contains(out, "more units would tell") {
		t.Errorf("cannot tell: %s", out)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: c\nmodes: [bare, overlay]\nclaims:\n  - {id: c, says: x, source: y, metric: transfer, series: overlay, ratio: [0.5, 1]}\n"), 0o644)
	var out, errb bytes.Buffer
	if code := Main(drivers.Catalog(), []string{"check", dir, "--claims", bad}, &out, &errb); code != ExitUsage || !strings.Contains(errb.String(), "claims[0].series") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("a series the run lacks: exit %d, %q", code, errb.String())
	}
	// The run's own spec has no claims: --claims alone says so.
	if code := Main(drivers.Catalog(), []string{"check", dir, "--claims"}, &out, &errb); code != ExitUsage {
		t.Errorf("no claims: exit %d", code)
	}
	errb.Reset()
	if code := Main(drivers.Catalog(), []string{"check", dir, "--max-cost", "bridge:transfer=25", "--save", "x.json"}, &out, &errb); code != ExitUsage || !strings.Contains(errb.String(), "--save") {
		t.Errorf("--save without --claims: exit %d, %q", code, errb.String())
	}
}

// cnperf runs cnperf with args, wanting exit code want; it returns stdout.
func cnperf(t *testing.T, want int, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main(drivers.Catalog(), args, &out, &errb); code != want {
		t.Fatalf("cnperf %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out.String(), errb.String())
	}
	return out.String()
}

// unzipped writes a gzipped testdata file out whole; it returns its path.
func unzipped(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), ".gz"))
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
