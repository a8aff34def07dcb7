package record

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckOutput(t *testing.T) {
	tmp := t.TempDir()
	run := filepath.Join(tmp, "run")
	w, err := Create(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteMeta(map[string]string{"status": "complete"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	other := filepath.Join(tmp, "other")
	mustMkdir(t, filepath.Join(run, LogsDir))
	mustMkdir(t, other)
	mustWrite(t, filepath.Join(run, LogsDir, "bare-ping.log"))
	mustWrite(t, filepath.Join(run, "report.html"))
	must(t, os.Symlink(filepath.Join(run, MetaFile), filepath.Join(other, "link.html")))
	must(t, os.Symlink(filepath.Join("..", "run", LogsDir, "new.log"), filepath.Join(other, "dangling.html")))
	must(t, os.Symlink(run, filepath.Join(other, "runlink")))
	must(t, os.Link(filepath.Join(run, SamplesFile), filepath.Join(other, "hard.csv")))

	tests := []struct {
		name    string
		path    string
		runs    []string
		refused bool
	}{
		{"run.json", filepath.Join(run, MetaFile), nil, true},
		{"samples.jsonl", filepath.Join(run, SamplesFile), nil, true},
		{"run.json by a detour", filepath.Join(run, "..", "run", ".", MetaFile), nil, true},
		{"run.json's temporary", filepath.Join(run, ".run.json.tmp-123"), nil, true},
		{"a server log", filepath.Join(run, LogsDir, "bare-ping.log"), nil, true},
		{"a new file in logs", filepath.Join(run, LogsDir, "fig.svg"), nil, true},
		{"through a directory symlink", filepath.Join(other, "runlink", SamplesFile), nil, true},
		{"a symlink to run.json", filepath.Join(other, "link.html"), nil, true},
		{"a dangling symlink into logs", filepath.Join(other, "dangling.html"), nil, true},
		{"a hard link to samples.jsonl, run given", filepath.Join(other, "hard.csv"), []string{run}, true},
		{"the default report", filepath.Join(run, "report.html"), []string{run}, false},
		{"a new file in the run", filepath.Join(run, "tables.json"), []string{run}, false},
		{"elsewhere", filepath.Join(other, "x.csv"), []string{run}, false},
		{"a relative name", "report.html", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckOutput(tc.path, tc.runs...)
			if got := errors.Is(err, ErrRunFile); got != tc.refused {
				t.Fatalf("CheckOutput(%s) = %v, want refused %v", tc.path, err, tc.refused)
			}
			if err != nil && !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name %s", err, tc.path)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, dir string) { t.Helper(); must(t, os.MkdirAll(dir, 0o755)) }

func mustWrite(t *testing.T, path string) {
	t.Helper()
	must(t, os.WriteFile(path, []byte("x"), 0o644))
}
