package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cnperf/cnperf/internal/report/importer"
)

// abFile writes an ab CSV with one 10-byte row per tag.
func abFile(t *testing.T, dir string, tags ...string) string {
	t.Helper()
	body := "Tag,Document Path,Document Length,Time taken for tests,Complete requests,Failed requests,Concurrency Level,Total transferred,Requests per second (mean),Transfer rate,Time per request\n"
	for _, tag := range tags {
		body += tag + ",/pong/10,10,0.512,1000,0,1,160000,1953.12,2.52,0.512\n"
	}
	p := filepath.Join(dir, "ab.csv")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImportDefaultReference: an import compares with a tag named like a
// reference, wherever it is in the file; without one, its output says to
// give --reference.
func TestImportDefaultReference(t *testing.T) {
	tests := []struct {
		name   string
		tags   []string
		args   []string
		ref    string
		advice bool
	}{
		{"native after the slowest setup", []string{"weave-encrypted", "weave", "native"}, nil, "reference native", false},
		{"vm", []string{"docker", "vm"}, nil, "reference vm", false},
		{"no reference-like tag", []string{"weave-encrypted", "weave"}, nil, "reference weave-encrypted", true},
		{"given", []string{"weave-encrypted", "weave"}, []string{"--reference", "weave"}, "reference weave", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "run")
			code, stdout, stderr := run(append([]string{"import", "--format", "ab", abFile(t, tmp, tc.tags...), "-o", dir}, tc.args...)...)
			if code != 0 {
				t.Fatalf("import: exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, tc.ref) {
				t.Errorf("import output lacks %q:\n%s", tc.ref, stdout)
			}
			if got := strings.Contains(stdout, "give --reference"); got != tc.advice {
				t.Errorf("advice to give --reference: %v, want %v:\n%s", got, tc.advice, stdout)
			}
			code, stdout, stderr = run("summary", dir)
			if code != 0 {
				t.Fatalf("summary: exit %d: %s", code, stderr)
			}
			if strings.Contains(stdout, "CPUs") || strings.Contains(stdout, "kernel") {
				t.Errorf("the summary of an import speaks of a machine it does not know:\n%s", stdout)
			}
		})
	}
}

// TestReportSizeAxisFlag: --size-axis takes auto, log or linear; anything
// else is refused before the work, naming the flag.
func TestReportSizeAxisFlag(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "run")
	if code, _, stderr := run("import", "--format", "ab", abFile(t, tmp, "bare", "weave"), "-o", dir); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	for _, axis := range []string{"auto", "log", "linear"} {
		if code, _, stderr := run("report", dir, "--size-axis", axis, "-o", filepath.Join(tmp, axis+".html")); code != 0 {
			t.Errorf("--size-axis %s: exit %d: %s", axis, code, stderr)
		}
	}
	code, _, stderr := run("report", dir, "--size-axis", "logarithmic", "-o", filepath.Join(tmp, "bad.html"))
	if code != 2 || !strings.Contains(stderr, `--size-axis "logarithmic"`) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("--size-axis logarithmic: exit %d, stderr %q; want exit 2 and one line naming the flag", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(tmp, "bad.html")); err == nil {
		t.Error("a refused report was written")
	}
}

// TestImportBounds: an import file that is not a regular file, or names
// more experiment tags than a run may hold series, is refused in one line
// (exit 2) and writes no run.
func TestImportBounds(t *testing.T) {
	tmp := t.TempDir()
	many := make([]string, importer.MaxTags+1)
	for i := range many {
		many[i] = fmt.Sprintf("tag%d", i)
	}
	fifo := filepath.Join(tmp, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"too many tags", abFile(t, t.TempDir(), many...), fmt.Sprintf("more than %d distinct experiment tags", importer.MaxTags)},
		{"named pipe", fifo, "is a named pipe, not a file"},
		{"device", "/dev/zero", "is a character device, not a file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(tmp, strings.ReplaceAll(tc.name, " ", "-"))
			code, _, stderr := run("import", "--format", "ab", tc.path, "-o", dir)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
				t.Errorf("a refused import wrote %s", dir)
			}
		})
	}
	// Exactly MaxTags tags still import.
	if code, _, stderr := run("import", "--format", "ab", abFile(t, t.TempDir(), many[:importer.MaxTags]...), "-o", filepath.Join(tmp, "max")); code != 0 {
		t.Errorf("%d tags: exit %d: %s", importer.MaxTags, code, stderr)
	}
}
