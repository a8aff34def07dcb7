package cli_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ppbenchLog is a small ppbench log: two modes, sizes apart.
const ppbenchLog = `"Machine Tag","Experiment Tag","Document Path","Failed requests","Concurrency Level","Total transferred","Time per request","Transfer rate","Requests per second","Retries","Response Code"
"m","bare","/mping/1000","0","1","1000","1.0","1000000","1000","0","200"
"m","bare","/mping/200000","0","1","200000","5.0","40000000","200","0","200"
"m","=HYPERLINK(""http://x"")","/mping/1010","0","1","1010","1.1","918181","909","0","200"
"m","=HYPERLINK(""http://x"")","/mping/201000","0","1","201000","5.5","36545454","181","0","200"
`

// importedRun imports ppbenchLog into a fresh run directory.
func importedRun(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	log := filepath.Join(tmp, "log.csv")
	if err := os.WriteFile(log, []byte(ppbenchLog), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	if code, _, stderr := run("import", "--format", "ppbench", log, "-o", dir, "--receive-window", "87380"); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	return dir
}

// digest hashes every file under dir, so a test sees any change to a run.
func digest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		fmt.Fprintf(&b, "%s %x\n", p, sha256.Sum256(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRunReadersBadInput: report, export, summary and import refuse bad
// input with one line naming it and exit 2, and leave the run as it was.
func TestRunReadersBadInput(t *testing.T) {
	dir := importedRun(t)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	empty, emptyObject := t.TempDir(), t.TempDir()
	for d, body := range map[string]string{empty: "", emptyObject: "{}"} {
		if err := os.WriteFile(filepath.Join(d, "run.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "samples.jsonl"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(t.TempDir(), "log.csv")
	if err := os.WriteFile(log, []byte(ppbenchLog), 0o644); err != nil {
		t.Fatal(err)
	}
	newDir := filepath.Join(t.TempDir(), "new")
	socketRun, err := filepath.Abs("../report/testdata/written-2026-11/sockets")
	if err != nil {
		t.Fatal(err)
	}
	runJSON, samples := filepath.Join(dir, "run.json"), filepath.Join(dir, "samples.jsonl")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"report over run.json", []string{"report", dir, "-o", runJSON}, []string{runJSON, "refusing"}},
		{"report over samples.jsonl", []string{"report", dir, "-o", samples}, []string{samples, "refusing"}},
		{"report over run.json by a detour", []string{"report", dir, "-o", dir + "/../run/run.json"}, []string{"run.json", "refusing"}},
		{"figures into logs", []string{"report", dir, "--figures", filepath.Join(dir, "logs")}, []string{"logs", "refusing"}},
		{"tables into logs", []string{"report", dir, "--tables", filepath.Join(dir, "logs")}, []string{"logs", "refusing"}},
		{"export over run.json", []string{"export", dir, "-o", runJSON}, []string{runJSON, "refusing"}},
		{"export over samples.jsonl", []string{"export", dir, "--format", "samples", "-o", samples}, []string{samples, "refusing"}},
		{"split-k NaN", []string{"report", dir, "--split-k", "NaN"}, []string{"--split-k NaN"}},
		{"split-k Inf", []string{"report", dir, "--split-k", "Inf"}, []string{"--split-k +Inf"}},
		{"split-k negative", []string{"report", dir, "--split-k", "-3"}, []string{"--split-k -3"}},
		{"split-k zero", []string{"report", dir, "--split-k", "0"}, []string{"--split-k 0"}},
		{"split-k absurd", []string{"report", dir, "--split-k", "1e300"}, []string{"--split-k 1e+300"}},
		{"same NaN", []string{"report", dir, "--same", "NaN"}, []string{"--same NaN"}},
		{"same negative", []string{"report", dir, "--same", "-1"}, []string{"--same -1"}},
		{"same above 100", []string{"report", dir, "--same", "101"}, []string{"--same 101"}},
		{"bins 0", []string{"report", dir, "--bins", "0"}, []string{"--bins 0"}},
		{"bins absurd", []string{"report", dir, "--bins", "10000000"}, []string{"--bins 10000000"}},
		{"smooth absurd", []string{"report", dir, "--smooth", "10000000"}, []string{"--smooth 10000000"}},
		{"summary of an empty run.json", []string{"summary", empty}, []string{empty, "run.json"}},
		{"summary of run.json {}", []string{"summary", emptyObject}, []string{emptyObject, "no modes"}},
		{"export of run.json {}", []string{"export", emptyObject}, []string{emptyObject, "no modes"}},
		{"export to a bad index", []string{"export", dir, "--format", "opensearch", "--index", "Runs"}, []string{`--index "Runs"`, "lower case"}},
		{"export against no such mode", []string{"export", dir, "--format", "openmetrics", "--reference", "nosuch"}, []string{`--reference "nosuch"`}},
		{"summary against no such mode", []string{"summary", dir, "--reference", "nosuch"}, []string{`--reference "nosuch": the run has no such mode (it has bare, =HYPERLINK`}},
		{"report against no such mode", []string{"report", dir, "--reference", "nosuch"}, []string{`--reference "nosuch": the run has no such mode (it has bare, =HYPERLINK`}},
		{"report of two runs against no such mode", []string{"report", dir, dir, "--reference", "nosuch", "-o", newDir + ".html"}, []string{`--reference "nosuch": no run has such a mode (they have bare, `}},
		{"ppbench of socket tests", []string{"export", socketRun, "--format", "ppbench"}, []string{"--format ppbench: writes ping-pong's requests, and the run has socket tests; openmetrics, opensearch and perfdash carry them"}},
		{"samples of socket tests", []string{"export", socketRun, "--format", "samples", "-o", newDir + ".csv"}, []string{"--format samples: writes ping-pong's requests"}},
		{"report of run.json {}", []string{"report", emptyObject}, []string{emptyObject, "no modes"}},
		{"report of an empty run.json", []string{"report", empty}, []string{empty, "run.json"}},
		{"report of nothing readable", []string{"report", "/nonexistent", empty}, []string{"/nonexistent", empty}},
		{"import window 0", []string{"import", "--format", "ppbench", log, "-o", newDir, "--receive-window", "0"}, []string{"--receive-window 0"}},
		{"import window 1", []string{"import", "--format", "ppbench", log, "-o", newDir, "--receive-window", "1"}, []string{"--receive-window 1"}},
		{"import window negative", []string{"import", "--format", "ppbench", log, "-o", newDir, "--receive-window", "-5"}, []string{"--receive-window -5"}},
		{"import window above 2^30", []string{"import", "--format", "ppbench", log, "-o", newDir, "--receive-window", "2147483648"}, []string{"--receive-window 2147483648"}},
	}
	before := digest(t, dir)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, stdout, stderr := run(tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.HasPrefix(stderr, "cnperf: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if after := digest(t, dir); after != before {
				t.Errorf("the run changed:\n%s\nwas\n%s", after, before)
			}
			for _, p := range []string{newDir, newDir + ".csv", newDir + ".html"} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was created", p)
				}
			}
		})
	}
}

// TestRunReadersWriteBesideTheRun: the default page and tables written into
// the run directory are fine, also a second time, and the run is unchanged.
func TestRunReadersWriteBesideTheRun(t *testing.T) {
	dir := importedRun(t)
	before := digest(t, filepath.Join(dir, "run.json")) + digest(t, filepath.Join(dir, "samples.jsonl"))
	for i := range 2 {
		code, stdout, stderr := run("report", dir, "--tables", dir)
		if code != 0 {
			t.Fatalf("report #%d: exit %d: %s", i, code, stderr)
		}
		if !strings.Contains(stdout, "report: "+filepath.Join(dir, "report.html")) {
			t.Errorf("stdout %q", stdout)
		}
	}
	if after := digest(t, filepath.Join(dir, "run.json")) + digest(t, filepath.Join(dir, "samples.jsonl")); after != before {
		t.Error("the run changed")
	}
	// The imported tag reaches the tables' CSV as a mode: neutralised.
	b, err := os.ReadFile(filepath.Join(dir, "tab-summary-transfer.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`'=HYPERLINK`)) || bytes.Contains(b, []byte("\n=HYPERLINK")) || bytes.Contains(b, []byte("\n\"=HYPERLINK")) {
		t.Errorf("tab-summary-transfer.csv:\n%s", b)
	}
}

// TestSummaryKeepsDigits: an imported run's small transfer rates print
// with digits (0.0 MB/s for every mode was unreadable).
func TestSummaryKeepsDigits(t *testing.T) {
	dir := importBareAndWeave(t)
	code, stdout, stderr := run("summary", dir)
	if code != 0 {
		t.Fatalf("summary: exit %d: %s", code, stderr)
	}
	// 10 B in 5.12 ms: 0.00195 MB/s; in 9.58 ms: 0.00104.
	for _, w := range []string{" 0.0020 ", " 0.0010 ", " 0.53 "} {
		if !strings.Contains(stdout, w) {
			t.Errorf("summary lacks %q:\n%s", w, stdout)
		}
	}
}

// TestSummaryAgainstAnotherMode: --reference puts the ratios against the
// mode named (weave's 9.58 ms against bare's 5.12: bare at 0.53 of weave's
// time is weave at 1.87 of bare's), and a mode the run lacks is bad input
// named in the flag's words.
func TestSummaryAgainstAnotherMode(t *testing.T) {
	dir := importBareAndWeave(t)
	code, stdout, stderr := run("summary", dir, "--reference", "weave")
	if code != 0 {
		t.Fatalf("summary --reference weave: exit %d: %s", code, stderr)
	}
	for _, w := range []string{"xweave", " 1.87 "} {
		if !strings.Contains(stdout, w) {
			t.Errorf("summary --reference weave lacks %q:\n%s", w, stdout)
		}
	}
	code, _, stderr = run("summary", dir, "--reference", "flannel")
	if code != 2 || !strings.Contains(stderr, `--reference "flannel"`) || !strings.Contains(stderr, "bare, weave") {
		t.Errorf("summary --reference flannel: exit %d, %q; want 2 naming the flag and the run's modes", code, stderr)
	}
}

// importBareAndWeave imports an ab CSV of two modes, bare and weave, 10 B
// in 5.12 ms and 9.58 ms, and returns the run directory.
func importBareAndWeave(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	log := filepath.Join(tmp, "ab.csv")
	body := "Tag,Document Path,Document Length,Time taken for tests,Complete requests,Failed requests,Concurrency Level,Total transferred,Requests per second (mean),Transfer rate,Time per request\n" +
		"bare,/pong/10,10,0.512,1000,0,10,160000,1953.12,2.52,5.120\n" +
		"weave,/pong/10,10,0.958,1000,0,10,160000,1043.84,1.48,9.580\n"
	if err := os.WriteFile(log, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	if code, _, stderr := run("import", "--format", "ab", log, "-o", dir); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	return dir
}
