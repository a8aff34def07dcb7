package export

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
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
