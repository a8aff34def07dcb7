package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/spec"
)

// A stored summary, written and read back, judges a claim as the run
// does; a changed range is judged anew from it, a changed definition is
// stale, a claim it lacks is missing, and a changed variant leaves the
// explanation untested.
func TestStoredRejudge(t *testing.T) {
	run := findingsRun(t, 0.6, 0.85)
	because := &spec.Explanation{Because: "the paper's condition", Variant: "paper"}
	claims := []spec.Claim{claim(0.8, 0.9, because)}
	ms, err := Measure(run, claims, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(Store(run, ms, run.Meta.Spec))
	if err != nil {
		t.Fatal(err)
	}
	st, err := ReadStored(bytes.NewReader(b), "stored.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(st.Imported, "imported from") || st.Changed != nil || len(st.Claims) != 1 || st.Claims[0].OnVariant == nil {
		t.Errorf("stored %+v", st)
	}
	want, err := Findings(run, claims, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := Rejudge(st, claims); len(got[0].Findings) != 1 || got[0].Findings[0].Line() != want[0].Line() || !strings.HasPrefix(got[0].Findings[0].Explained, "measured") {
		t.Errorf("rejudged %+v, the run judges %s", got, want[0].Line())
	}
	wider := claim(0.5, 0.7, because)
	if got := Rejudge(st, []spec.Claim{wider}); got[0].Findings[0].Verdict != Agrees {
		t.Errorf("a wider range: %s", got[0].Findings[0].Line())
	}
	for _, c := range []struct {
		edit  func(*spec.Claim)
		stale string
	}{
		{func(c *spec.Claim) { c.Metric = "latency" }, "metric"},
		{func(c *spec.Claim) { c.Against = "bridge/paper" }, "series"},
		{func(c *spec.Claim) { c.Sizes = []int{10, 100} }, "sizes"},
		{func(c *spec.Claim) { c.Test = "t" }, "test"},
	} {
		edited := claim(0.8, 0.9, because)
		c.edit(&edited)
		if got := Rejudge(st, []spec.Claim{edited}); got[0].Stale != c.stale || got[0].Findings != nil {
			t.Errorf("%s changed: %+v", c.stale, got[0])
		}
	}
	other := claim(0.8, 0.9, &spec.Explanation{Because: "x", Variant: "other"})
	if got := Rejudge(st, []spec.Claim{other}); !strings.HasPrefix(got[0].Findings[0].Explained, "untested") {
		t.Errorf("a changed variant: %q", got[0].Findings[0].Explained)
	}
	newer := claim(0.8, 0.9, nil)
	newer.ID = "newer"
	if got := Rejudge(st, []spec.Claim{newer}); !got[0].Missing {
		t.Errorf("a claim the run lacks: %+v", got[0])
	}
}

// A ratio the run could not give (no paired units) is stored as null and
// read back as none.
func TestStoredNoRatio(t *testing.T) {
	s := storeInterval(analysis.Interval{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Units: 0})
	if s.Ratio != nil || s.CI != nil || s.check() != nil || !math.IsNaN(s.interval().Ratio) || s.interval().Known() {
		t.Errorf("stored %+v", s)
	}
}

// The summary of a run of a preset names the fields the run changed.
func TestSpecChanges(t *testing.T) {
	p, err := spec.Preset("seed004")
	if err != nil {
		t.Fatal(err)
	}
	if got := specChanges(p, p); got != nil {
		t.Errorf("the preset against itself: %q", got)
	}
	short := p
	short.PingPong.Coverage, short.Instances = 0.0001, 1
	short.Claims = nil // claims are judged, not run
	if got := strings.Join(specChanges(short, p), " "); got != "instances pingpong.coverage" {
		t.Errorf("shortened: %q", got)
	}
}

// ReadStored refuses what Store never writes, naming the field.
func TestReadStoredRefuses(t *testing.T) {
	good := `{"format":"cnperf-findings/1","preset":"p","run":"r","date":"2026-01-01T00:00:00Z","cnperf":"v","machine":{"cpu":"c","cores":2,"kernel":"k"},` +
		`"claims":[{"id":"c","metric":"transfer","series":"b","against":"a","ratio":0.8,"ci":[0.7,0.9],"instances":1,"units":10}]}`
	if _, err := ReadStored(strings.NewReader(good), "f"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, err string }{
		{`cnperf-findings/1`, `cnperf-findings/2`, "format"},
		{`"preset":"p"`, `"preset":""`, "preset"},
		{`"ratio":0.8`, `"ratio":-1`, "claims[0].ratio"},
		{`"ci":[0.7,0.9]`, `"ci":[0.9,0.7]`, "claims[0].ci"},
		{`"ratio":0.8`, `"ratio":null`, "claims[0].ci"},
		{`"units":10`, `"units":-1`, "claims[0].units"},
		{`"id":"c"`, `"id":""`, "claims[0].id"},
		{`"against":"a"`, `"against":"a","sizes":[5,1]`, "claims[0].sizes"},
		{`"units":10}`, `"units":10,"on_variant":{"ratio":1,"ci":null,"instances":1,"units":1}}`, "on_variant"},
		{`"cores":2`, `"cores":2,"gpu":1`, "unknown field"},
		{`]}`, `]}{}`, "more than one"},
		{`"claims":[{`, `"claims":[{"id":"c","metric":"transfer","series":"b","against":"a","ratio":0.8,"ci":null,"instances":1,"units":10},{`, "there twice"},
		{`"cnperf":"v"`, `"cnperf":"` + strings.Repeat("v", 2000) + `"`, "cnperf"},
	} {
		doc := strings.Replace(good, c.from, c.to, 1)
		if _, err := ReadStored(strings.NewReader(doc), "f"); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.to, err, c.err)
		}
	}
	if _, err := ReadStored(strings.NewReader(strings.Repeat(" ", MaxStoredBytes+1)), "f"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("too large: %v", err)
	}
}

// FuzzReadStored: whatever a file holds, ReadStored returns a summary
// whose figures Rejudge can judge, or an error; it never panics.
func FuzzReadStored(f *testing.F) {
	f.Add([]byte(`{"format":"cnperf-findings/1","preset":"p","run":"r","date":"2026-01-01T00:00:00Z","cnperf":"v","machine":{"cpu":"c","cores":2,"kernel":"k"},` +
		`"claims":[{"id":"c","metric":"transfer","series":"b","against":"a","variant":"v","ratio":0.8,"ci":[0.7,0.9],"instances":1,"units":10,"on_variant":{"ratio":0.85,"ci":null,"instances":1,"units":2}}]}`))
	f.Add([]byte(`{"format":"cnperf-findings/1","preset":"p","run":"r","date":"2026-01-01T00:00:00Z","cnperf":"","machine":{"cpu":"","cores":0,"kernel":""},"imported":"x","busy":"y","changed":["a","..."],"claims":[]}`))
	f.Add([]byte(`{"format":"cnperf-findings/1","claims":[{"ratio":1e400}]}`))
	f.Add([]byte(`{"format":"cnperf-findings/1","claims":[{"ci":[NaN,1]}]}`))
	f.Add([]byte(`{"format":"cnperf-findings/1","preset":"p","run":"r","date":"2026-01-01T00:00:00Z","cnperf":"v","machine":{"cpu":"c","cores":2,"kernel":"k"},` +
		`"claims":[{"id":"c","metric":"transfer","series":"b","against":"a","ratio":null,"ci":null,"instances":0,"units":0}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ReadStored(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		one := 1.0
		var claims []spec.Claim
		for _, c := range st.Claims {
			claims = append(claims, spec.Claim{ID: c.ID, Metric: c.Metric, Series: c.Series, Against: c.Against, Test: c.Test, Sizes: c.Sizes,
				Ratio: []*float64{nil, &one}, Explain: &spec.Explanation{Because: "b", Variant: c.Variant}})
		}
		for _, r := range Rejudge(st, claims) {
			if r.Stale != "" || r.Missing {
				t.Fatalf("a claim judged on its own figures: %+v", r)
			}
		}
	})
}
