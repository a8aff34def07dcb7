package spec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
)

// TestSection: a driver's section is kept as written until the driver
// decodes it: strictly and named by its path from YAML, and the same
// through a stored run's JSON and the spec's YAML.
func TestSection(t *testing.T) {
	type inner struct {
		B []int `yaml:"b" json:"b"`
	}
	type section struct {
		A string `yaml:"a" json:"a"`
		I *inner `yaml:"inner,omitempty" json:"inner,omitempty"`
	}
	s, err := spec.Parse(strings.NewReader("name: x\nmodes: [bare]\nengines:\n  a: one\n  inner: {b: [1, 2]}\n"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := spec.Decode[section](s.Engines, "engines")
	if err != nil || want.A != "one" || len(want.I.B) != 2 {
		t.Fatalf("decoded %+v, %v", want, err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var stored spec.Spec
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	got, err := spec.Decode[section](stored.Engines, "engines")
	if err != nil || got.A != "one" || len(got.I.B) != 2 {
		t.Fatalf("through JSON %s: decoded %+v, %v", b, got, err)
	}
	if again, err := json.Marshal(stored); err != nil || string(again) != string(b) {
		t.Fatalf("stored JSON changed:\n%s\n%s (%v)", b, again, err)
	}
	y, err := stored.YAML()
	if err != nil || !strings.Contains(string(y), "engines:\n    a: one\n") {
		t.Fatalf("YAML %s, %v", y, err)
	}
	for doc, msg := range map[string]string{
		"engines:\n  a: one\n  inner: {b: [1], c: 2}\n": `line 5: unknown field "engines.inner.c"`,
		"engines:\n  a: one\n  inner: {b: [x]}\n":       "line 5: engines.inner.b[0]: cannot unmarshal !!str `x` into int",
	} {
		s, err := spec.Parse(strings.NewReader("name: x\nmodes: [bare]\n"+doc), "x.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := spec.Decode[section](s.Engines, "engines"); err == nil || err.Error() != msg {
			t.Errorf("%q: err %v, want %s", doc, err, msg)
		}
	}
	if err := json.Unmarshal([]byte(`{"name": "x", "engines": {"a": "one", "c": 2}}`), &stored); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Decode[section](stored.Engines, "engines"); err == nil || !strings.Contains(err.Error(), `engines: json: unknown field "c"`) {
		t.Errorf("stored unknown field: %v", err)
	}
}
