package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Runs written by cnperf before its packages were reorganised
// must still load and report the same tables and summary. testdata holds
// two such runs (ping-pong with two instances per lab, and every socket
// workload) and what that cnperf printed and wrote for them; only the
// generation time and the run's path may differ.
func TestRunsWrittenBeforeIssue11ReportIdentically(t *testing.T) {
	generated := regexp.MustCompile(`(?m)^\s*"generated": ".*",?\n`)
	for _, name := range []string{"pingpong", "sockets"} {
		t.Run(name, func(t *testing.T) {
			base := filepath.Join("testdata", "before-issue11")
			dir := filepath.Join(base, name)
			var summary, warn bytes.Buffer
			meta, samples, err := ReadRun(dir, &warn)
			if err != nil {
				t.Fatal(err)
			}
			if err := Summary(&summary, &warn, dir, meta, samples, true); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(base, name+".summary.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if summary.String() != string(want) {
				t.Errorf("summary differs from the one cnperf printed before:\n%s\nwant:\n%s", summary.String(), want)
			}
			runs, notes := Load([]string{dir})
			if len(runs) != 1 {
				t.Fatalf("Load: %v", notes)
			}
			r, err := Build(runs, notes, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			if _, err := r.WriteTables(out); err != nil {
				t.Fatal(err)
			}
			wantDir := filepath.Join(base, name+".tables")
			entries, err := os.ReadDir(wantDir)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadDir(out)
			if len(got) != len(entries) {
				t.Errorf("%d table files, want %d", len(got), len(entries))
			}
			for _, e := range entries {
				w, err := os.ReadFile(filepath.Join(wantDir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				g, err := os.ReadFile(filepath.Join(out, e.Name()))
				if err != nil {
					t.Errorf("%s: not written: %v", e.Name(), err)
					continue
				}
				// The fixtures were written from the repository's root.
				ws := strings.ReplaceAll(generated.ReplaceAllString(string(w), ""), "internal/report/"+dir, dir)
				if gs := generated.ReplaceAllString(string(g), ""); gs != ws {
					t.Errorf("%s differs from the one cnperf wrote before (%d bytes, want %d)", e.Name(), len(gs), len(ws))
				}
			}
		})
	}
}
