package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/report/gate/gatetest"
	"github.com/cnperf/cnperf/internal/testutil/bounded"
)

// readers are the commands that read a run directory, each with what it
// needs besides the run; report writes its page to out.
func readers(out string) map[string][]string {
	return map[string][]string{
		"summary":   {"summary"},
		"export":    {"export"},
		"report":    {"report", "-o", filepath.Join(out, "report.html")},
		"check":     {"check", "--max-cost", "bridge:transfer=50"},
		"calibrate": {"calibrate"},
	}
}

// measured runs cnperf with args and returns its exit, its output, the
// bytes it allocated and how long it took; a reader that hangs fails the
// test after 20 s.
func measured(t *testing.T, args ...string) (code int, stdout, stderr string, alloc uint64, took time.Duration) {
	t.Helper()
	alloc, took = bounded.Cost(t, 20*time.Second, func() { code, stdout, stderr = run(args...) })
	return code, stdout, stderr, alloc, took
}

// copyRun copies a run's two files into a new directory.
func copyRun(t *testing.T, from string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"run.json", "samples.jsonl"} {
		b, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// rename replaces every old in the file at path with new.
func rename(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s holds no %s", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), old, new)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostileRunDirectories: every reader of a run refuses a run
// directory whose files are not regular files, are larger than a run
// writes, or hold a line or a name longer than one, in one line naming the file,
// with exit 2, little memory and at once.
func TestHostileRunDirectories(t *testing.T) {
	base := gatetest.WriteRun(t, 6, 1, func(int) float64 { return 0.8 })
	damage := []struct {
		name string
		file string // the file damaged
		do   func(t *testing.T, path string)
		want string
	}{
		{"a 2 GB line in a sparse samples.jsonl", "samples.jsonl", func(t *testing.T, path string) {
			if err := os.Truncate(path, 2<<30); err != nil {
				t.Fatal(err)
			}
		}, "longer than 1 MiB"},
		{"a sparse run.json of 2 GB", "run.json", func(t *testing.T, path string) {
			if err := os.Truncate(path, 2<<30); err != nil {
				t.Fatal(err)
			}
		}, "is larger than 256 MiB"},
		{"samples.jsonl a link to /dev/zero", "samples.jsonl", func(t *testing.T, path string) {
			os.Remove(path)
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "is a character device, not a file"},
		{"run.json a link to /dev/zero", "run.json", func(t *testing.T, path string) {
			os.Remove(path)
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "is a character device, not a file"},
		{"samples.jsonl a named pipe", "samples.jsonl", func(t *testing.T, path string) {
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is a named pipe, not a file"},
		{"run.json a named pipe", "run.json", func(t *testing.T, path string) {
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is a named pipe, not a file"},
		// Names that every line of an export repeated: a 1 MB mode name
		// made 926 MB of OpenMetrics at 1.57 GB of memory.
		{"a mode name of 1 MB", "run.json", func(t *testing.T, path string) {
			long := strings.Repeat("m", 1_000_000)
			for _, name := range []string{"run.json", "samples.jsonl"} {
				rename(t, filepath.Join(filepath.Dir(path), name), `"bridge"`, `"`+long+`"`)
			}
		}, "spec.modes[1] is 1000000 bytes, longer than 1 KiB: not a name cnperf writes"},
		{"a run id of 1 MB", "run.json", func(t *testing.T, path string) {
			rename(t, path, `"id": ""`, `"id": "`+strings.Repeat("r", 1_000_000)+`"`)
		}, "id is 1000000 bytes, longer than 1 KiB: not a name cnperf writes"},
	}
	for _, d := range damage {
		dir := copyRun(t, base)
		path := filepath.Join(dir, d.file)
		d.do(t, path)
		for name, args := range readers(t.TempDir()) {
			t.Run(d.name+"/"+name, func(t *testing.T) {
				t.Chdir(t.TempDir())
				code, stdout, stderr, alloc, took := measured(t, append(args[:1:1], append([]string{dir}, args[1:]...)...)...)
				t.Logf("exit %d, %d KB, %s: %q", code, alloc>>10, took, stderr)
				if code != 2 {
					t.Errorf("exit %d, want 2", code)
				}
				if !strings.HasPrefix(stderr, "cnperf: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, path) || !strings.Contains(stderr, d.want) {
					t.Errorf("stderr %q: want one line naming %s with %q", stderr, path, d.want)
				}
				if stdout != "" {
					t.Errorf("stdout %q", stdout)
				}
				if alloc > 64<<20 {
					t.Errorf("allocated %d MB", alloc>>20)
				}
				if took > 10*time.Second {
					t.Errorf("took %s", took)
				}
			})
		}
	}
}

// TestUnlistedSeriesSkipped: 10,000 series run.json does not list (1.3 MB
// of lines) are skipped and counted by every reader, in one line naming
// the file, and cost no table, page or memory of their own.
func TestUnlistedSeriesSkipped(t *testing.T) {
	base := gatetest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 }) // sizes wide enough to calibrate
	dir := copyRun(t, base)
	f, err := os.OpenFile(filepath.Join(dir, "samples.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 10000
	for i := range n {
		fmt.Fprintf(f, `{"workload":"pingpong","mode":"invented-%d","cell":0,"size":%d,"rep":0,"duration_ms":1,"latency_ms":1.3,"length":%[2]d,"code":200}`+"\n", i, 100+i)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`samples.jsonl: %d lines of series that run.json does not list ("invented-0", "invented-1", "invented-2", …): skipped`, n)
	out := t.TempDir()
	page := map[string]int64{}
	for _, d := range []string{base, dir} {
		for name, args := range readers(out) {
			args := append(args[:1:1], append([]string{d}, args[1:]...)...)
			if name == "report" {
				args[len(args)-1] = filepath.Join(out, filepath.Base(filepath.Dir(d))+".html")
			}
			code, stdout, stderr, alloc, took := measured(t, args...)
			t.Logf("%s %s: exit %d, %d MB, %s", name, d, code, alloc>>20, took)
			if code != 0 {
				t.Errorf("%s: exit %d: %s", name, code, stderr)
			}
			told := strings.Count(stderr+stdout, want)
			switch {
			case d == base && told != 0:
				t.Errorf("%s of the run itself told of unlisted lines", name)
			case d == dir && told != 1:
				t.Errorf("%s: told %d times %q:\nstderr %s\nstdout %.2000s", name, told, want, stderr, stdout)
			}
			if strings.Contains(strings.ReplaceAll(stdout, want, ""), "invented-") {
				t.Errorf("%s shows an invented series:\n%.2000s", name, stdout)
			}
			if alloc > 256<<20 {
				t.Errorf("%s: allocated %d MB", name, alloc>>20)
			}
			if name == "report" {
				html, err := os.ReadFile(args[len(args)-1])
				if err != nil {
					t.Fatal(err)
				}
				page[d] = int64(len(html))
				if c := strings.Count(string(html), "invented-"); c > 3 {
					t.Errorf("the page names invented series %d times", c)
				}
			}
		}
	}
	if page[dir] > page[base]+64<<10 {
		t.Errorf("the page grew from %d to %d bytes", page[base], page[dir])
	}
}

// TestSummaryOfUnfinishedRun: a run.json left at status running (the run
// was killed, or its end could not be written) is said not to have
// finished.
func TestSummaryOfUnfinishedRun(t *testing.T) {
	dir := copyRun(t, gatetest.WriteRun(t, 6, 1, func(int) float64 { return 0.8 }))
	path := filepath.Join(dir, "run.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), `"status": "complete"`, `"status": "running"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run("summary", dir)
	if code != 0 || !strings.Contains(stderr, "the run did not finish (status running)") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "status running") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestReadersOfFailedRun: a run stored with status failed (a step failed,
// or nothing was measured) is read by every reader, which says its status
// once; what it measured is shown.
func TestReadersOfFailedRun(t *testing.T) {
	dir := copyRun(t, gatetest.WriteRun(t, 6, 1, func(int) float64 { return 0.8 }))
	path := filepath.Join(dir, "run.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	failed := strings.Replace(string(b), `"status": "complete"`, `"status": "failed", "error": "nothing was measured: all 12 cells failed (the first: client: exit status 1)"`, 1)
	if failed == string(b) {
		t.Fatal("no status to replace")
	}
	if err := os.WriteFile(path, []byte(failed), 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "r.html")
	note := `the run's status is "failed"`
	for _, args := range [][]string{
		{"summary", dir},
		{"export", dir, "--format", "openmetrics"},
		{"report", dir, "-o", page}, // the note is on the page
		{"check", dir, "--max-cost", "bridge:transfer=50"},
	} {
		code, stdout, stderr := run(args...)
		if code != 0 || stdout == "" || args[0] != "report" && !strings.Contains(stderr, note) {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "status is &#34;failed&#34;") {
		t.Errorf("the page lacks %q (%v)", note, err)
	}
}
