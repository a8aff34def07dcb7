package export

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/export/exporttest"
)

func TestSafeCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"-3.5", "-3.5"}, // a negative number stays a number
		{"+1e3", "+1e3"},
		{"-0", "-0"},
		{"bridge", "bridge"},
		{"a=b", "a=b"}, // only the first character counts
		{"", ""},
		{"'=already", "'=already"},
	}
	for _, tc := range tests {
		if got := SafeCell(tc.in); got != tc.want {
			t.Errorf("SafeCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestExportNeutralisesFormulas: imported tags such as =HYPERLINK(...)
// reach both CSV exports as modes, labels and errors.
func TestExportNeutralisesFormulas(t *testing.T) {
	evil := `=HYPERLINK("http://evil","x")`
	samples := []record.Sample{{Workload: "pingpong", Mode: evil, Size: 10, Length: 10, Code: 200, DurationMS: -1.5,
		Labels: map[string]string{"machine": "@me"}, Error: "-bad"}}
	tests := []struct {
		name  string
		write func(*bytes.Buffer) error
		want  []string // cells of the data row that must appear as they are
	}{
		{"samples", func(b *bytes.Buffer) error { return Samples(b, samples) }, []string{"'" + evil, "'-bad", "'@me", "-1.5"}},
		{"ppbench", func(b *bytes.Buffer) error {
			ok := samples[0]
			ok.Error, ok.DurationMS = "", 2
			return PPBench(b, []record.Sample{ok}, PPBenchOptions{MachineTag: "+tag"})
		}, []string{"'+tag", "'" + evil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
			if err != nil || len(rows) != 2 {
				t.Fatalf("%d rows, err %v:\n%s", len(rows), err, b.String())
			}
			cells := map[string]bool{}
			for _, c := range rows[1] {
				cells[c] = true
				if c != "" && strings.ContainsRune("=+@\t\r", rune(c[0])) {
					t.Errorf("cell %q starts a formula", c)
				}
			}
			for _, w := range tc.want {
				if !cells[w] {
					t.Errorf("row %q lacks the cell %q", rows[1], w)
				}
			}
		})
	}
}

// TestHostileNamesInFeeds: names as long as a stored run may hold
// (record.MaxNameBytes), made of what would break out of each format
// (quotes, backslashes, line feeds, a fake "# EOF" or bulk action, bytes
// that are not UTF-8), stay inside their labels: every feed format is
// valid for its reader, and its size is the labels' size times the lines,
// no more.
func TestHostileNamesInFeeds(t *testing.T) {
	bits := []string{"\"} 1\n# EOF\n", `\`, "\n{\"index\":{}}\n", "\xff\xfe", `{{.}}`, "=cmd|"}
	var b strings.Builder
	for i := 0; b.Len() < record.MaxNameBytes-16; i++ {
		b.WriteString(bits[i%len(bits)])
	}
	name := b.String()
	stamp := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	f := Feed{RunID: name, Start: stamp, End: stamp, Results: []Result{{
		Labels: map[string]string{"run": name, "series": name, "mode": name, "case": name, "instance": "all"},
		Figures: []Figure{{Key: "rtt_p50", Title: name, Unit: "µs", Value: 1, SD: math.NaN(), Ratio: 2, RatioLo: 1, RatioHi: 3, Reference: name},
			{Key: "throughput", Title: "Throughput", Unit: "Mbit/s", Value: 1, SD: 0.1, Ratio: math.NaN(), RatioLo: math.NaN(), RatioHi: math.NaN()}},
	}}}
	for _, tc := range []struct {
		format string
		check  func([]byte) error
	}{
		{"openmetrics", exporttest.CheckOpenMetrics},
		{"opensearch", func(b []byte) error { _, err := exporttest.CheckBulk(b, DefaultIndex); return err }},
		{"perfdash", func(b []byte) error { _, err := exporttest.DecodePerfDash(b); return err }},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteFeed(&out, tc.format, f, FeedOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := tc.check(out.Bytes()); err != nil {
				t.Errorf("%v", err)
			}
			// Six names on at most six lines, each escaped to at most
			// six bytes a byte (\u00XX), and the format's own text.
			if n := out.Len(); n > 6*6*6*record.MaxNameBytes+16<<10 {
				t.Errorf("%d bytes for names of %d", n, len(name))
			}
		})
	}
}
