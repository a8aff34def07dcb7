package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

// TestRunFormatAndTag: a format export cannot write is refused in
// --format's words; ppbench's machine tag is the one given, else the
// run's "machine" label, else its host name.
func TestRunFormatAndTag(t *testing.T) {
	if err := ValidateFormat("json"); err == nil || err.Error() != `--format "json": want ppbench, samples, openmetrics, opensearch or perfdash` {
		t.Errorf("ValidateFormat(json) = %v", err)
	}
	samples := []record.Sample{{Workload: "pingpong", Mode: "bare", Size: 100, Length: 100, Code: 200, DurationMS: 1, LatencyMS: 1}}
	for _, tc := range []struct {
		given, label, host, want string
	}{
		{"given", "label", "host", "given"},
		{"", "label", "host", "label"},
		{"", "", "host", "host"},
	} {
		var meta record.Meta
		meta.Spec.Labels = map[string]string{"machine": tc.label}
		meta.Machine.Hostname = tc.host
		var b bytes.Buffer
		if err := Run(&b, "ppbench", &meta, samples, tc.given); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(b.String(), "\n"); len(lines) < 2 || !strings.HasPrefix(lines[1], `"`+tc.want+`",`) {
			t.Errorf("given %q, label %q, host %q: %q, want the tag %q", tc.given, tc.label, tc.host, b.String(), tc.want)
		}
	}
}

// TestCheckCarries: ppbench and samples carry ping-pong's requests; on a
// run of socket tests they would write a header alone, so they are
// refused there, and the feed formats are not.
func TestCheckCarries(t *testing.T) {
	for _, tc := range []struct {
		format string
		socket bool
		want   string // "" accepted
	}{
		{"ppbench", false, ""},
		{"samples", false, ""},
		{"ppbench", true, "--format ppbench: writes ping-pong's requests, and the run has socket tests; openmetrics, opensearch and perfdash carry them"},
		{"samples", true, "--format samples: writes ping-pong's requests"},
		{"openmetrics", true, ""},
		{"opensearch", true, ""},
		{"perfdash", true, ""},
		{"perfdash", false, ""},
	} {
		err := CheckCarries(tc.format, tc.socket)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s, socket %v: %v, want %q", tc.format, tc.socket, err, tc.want)
		}
	}
}
