package spec_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
)

// TestLoadIsBounded: a spec path that never ends (/dev/zero) is refused
// after MaxSpecBytes, not read into memory whole.
func TestLoadIsBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := spec.Load("/dev/zero")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "/dev/zero: larger than 1048576 bytes") {
		t.Errorf("err %v", err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 16<<20 {
		t.Errorf("allocated %d MB", a>>20)
	}
}

// TestSyntaxErrorLines: a spec's syntax error names the line it is on,
// counted from 1 as an editor counts: yaml.v3's parser says its lines one
// early (line 1 for an error on line 2) and none on the first, its scanner
// none on the first.
func TestSyntaxErrorLines(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"flow sequence unclosed on line 1", "modes: [bare, host}\n", "line 1: did not find expected ',' or ']'"},
		{"flow sequence unclosed on line 2", "name: x\nmodes: [bare, host}\n", "line 2: did not find expected ',' or ']'"},
		{"flow mapping unclosed on line 3", "name: x\nreference: bare\npingpong: {port: 80]\n", "line 3: did not find expected ',' or '}'"},
		{"sequence entry in a mapping on line 2", "name: x\n- bare\n", "line 2: did not find expected key"},
		{"sequence entry in a mapping on line 4", "name: x\nreference: bare\nmodes: [bare]\n- host\n", "line 4: did not find expected key"},
		{"mapping in a sequence on line 2", "- bare\nname: x\n", "line 2: did not find expected '-' indicator"},
		{"key indented too little on line 3", "pingpong:\n  port: 80\n chunk: 2\n", "line 3: did not find expected key"},
		{"mapping value on line 1", "name: x: y\n", "line 1: mapping values are not allowed in this context"},
		{"mapping value on line 2", "name: x\nreference: a: b\n", "line 2: mapping values are not allowed in this context"},
		{"tab on line 1", "\tname: x\n", "line 1: found character that cannot start any token"},
		{"tab on line 4", "name: x\nreference: bare\nmodes:\n\t- bare\n", "line 4: found character that cannot start any token"},
		// The scanner names the line where the value it was reading began:
		// the tab could have continued "bare" of line 2.
		{"tab after a value on line 2", "name: x\nreference: bare\n\tmodes: [bare]\n", "line 2: found a tab character that violates indentation"},
		{"quote unclosed on line 3", "name: x\nmodes: [bare]\nreference: \"bare\n", "line 3: found unexpected end of stream"},
		{"stray character on line 2", "name: x\n@modes: [bare]\n", "line 2: found character that cannot start any token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spec.Parse(strings.NewReader(tc.doc), "s.yaml")
			if want := "s.yaml: " + tc.want; err == nil || err.Error() != want {
				t.Errorf("err %v, want %q", err, want)
			}
		})
	}
}
