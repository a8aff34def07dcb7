package report

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// storedRuns are run directories written by earlier cnperf binaries, with
// what that cnperf printed (DIR.summary.txt, `cnperf summary DIR`) and
// wrote (DIR.tables, `cnperf report DIR --tables`; DIR.html.gz, the page
// gzipped) for them. A change to the code must leave all of it as it was:
// a stored run is read years later, and its report must not drift.
//
// before-reorganisation holds two runs of the cnperf that preceded the package
// reorganisation; their summary and tables are what that binary printed,
// their page, check and export what the binary of 2026-11-27 wrote.
// written-2026-11 holds one short run of each kind that binary wrote, made
// from the specs in written-2026-11/specs (its README says how), with
// everything it printed and wrote.
var storedRuns = []struct {
	dir  string
	what string
}{
	{"before-reorganisation/pingpong", "ping-pong, three modes, two lab instances each"},
	{"before-reorganisation/sockets", "every socket workload"},
	{"written-2026-11/pingpong", "ping-pong with two lab instances per mode"},
	{"written-2026-11/sockets", "stream tcp and udp (swept), rr tcp and crr, jitter, datagram; two instances, two repetitions"},
	{"written-2026-11/hops", "a chain of three hosts: rr and stream to each host, rr per segment"},
	{"written-2026-11/fanout", "a placement of three servers and three clients: clients, pairs, processes, servers"},
	{"written-2026-11/grid", "the data-grid workload"},
	{"written-2026-11/import-ppbench", "cnperf import of a ppbench CSV, with a failed, a 503 and a skipped row"},
	{"written-2026-11/import-ab", "cnperf import of an apachebench CSV"},
	{"written-2026-11/k8s-sockets", "the kubernetes driver: stream and rr, host and pod network"},
	{"written-2026-11/k8s-pingpong", "the kubernetes driver: ping-pong, same node and across nodes"},
	{"written-2026-11/k8s-daemons", "the kubernetes driver on flannel-vxlan: stream and rr with the node daemons' cost per cell"},
	{"written-2026-11/docker", "ping-pong on the netns and docker drivers side by side"},
	{"written-2026-11/servers", "ping-pong with the spec's own pong (pingpong.servers)"},
}

func TestStoredRunsReportIdentically(t *testing.T) {
	// Only the generation time and the run's path may differ: the
	// fixtures were written from the repository's root, at their time.
	generatedJSON := regexp.MustCompile(`(?m)^\s*"generated": ".*",?\n`)
	generatedHTML := regexp.MustCompile(`Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC`)
	for _, sr := range storedRuns {
		t.Run(sr.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", filepath.FromSlash(sr.dir))
			fromRoot := func(s string) string { return strings.ReplaceAll(s, "internal/report/"+dir, dir) }

			var summary, warn bytes.Buffer
			run, err := ReadRun(dir, &warn)
			if err != nil {
				t.Fatal(err)
			}
			if err := Summary(&summary, run, "", true); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(dir + ".summary.txt")
			if err != nil {
				t.Fatal(err)
			}
			if summary.String() != string(want) {
				t.Errorf("summary differs from the one cnperf printed before:\n%s\nwant:\n%s%s", summary.String(), want, firstDiff(summary.String(), string(want)))
			}

			// As `cnperf report` builds it: the default options, and the
			// servers table when a run named its own servers.
			runs, notes := Load([]string{dir})
			if len(runs) != 1 {
				t.Fatalf("Load: %v", notes)
			}
			r, err := Build(runs, notes, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if st, ok := ServersTable(runs); ok {
				r.Tables = append(r.Tables, st)
			}
			out := t.TempDir()
			if _, err := r.WriteTables(out); err != nil {
				t.Fatal(err)
			}
			wantDir := dir + ".tables"
			entries, err := os.ReadDir(wantDir)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadDir(out)
			if len(got) != len(entries) {
				t.Errorf("%d table files %v, want %d %v", len(got), names(got), len(entries), names(entries))
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
				ws := fromRoot(generatedJSON.ReplaceAllString(string(w), ""))
				if gs := generatedJSON.ReplaceAllString(string(g), ""); gs != ws {
					t.Errorf("%s differs from the one cnperf wrote before (%d bytes, want %d)%s", e.Name(), len(gs), len(ws), firstDiff(gs, ws))
				}
			}

			// The page: every figure's SVG, every table, the notes.
			page := filepath.Join(out, "report.html")
			if err := r.WriteHTML(page); err != nil {
				t.Fatal(err)
			}
			g, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			w, err := gunzip(dir + ".html.gz")
			if err != nil {
				t.Fatal(err)
			}
			ws := fromRoot(generatedHTML.ReplaceAllString(string(w), ""))
			if gs := generatedHTML.ReplaceAllString(string(g), ""); gs != ws {
				t.Errorf("report.html differs from the one cnperf wrote before (%d bytes, want %d)%s", len(gs), len(ws), firstDiff(gs, ws))
			}
		})
	}
}

// Every stored run directory is in the table above: a run added to
// testdata without a line there would guard nothing.
func TestStoredRunsAllChecked(t *testing.T) {
	listed := map[string]bool{}
	for _, sr := range storedRuns {
		listed[sr.dir] = true
	}
	for _, base := range []string{"before-reorganisation", "written-2026-11"} {
		entries, err := os.ReadDir(filepath.Join("testdata", base))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() || filepath.Ext(e.Name()) == ".tables" || e.Name() == "specs" {
				continue
			}
			if d := base + "/" + e.Name(); !listed[d] {
				t.Errorf("testdata/%s is a stored run that TestStoredRunsReportIdentically does not check", d)
			}
		}
	}
}

func names(es []os.DirEntry) []string {
	var s []string
	for _, e := range es {
		s = append(s, e.Name())
	}
	sort.Strings(s)
	return s
}

func gunzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// firstDiff shows where got and want first part, with some text around,
// so that a failure says what changed and not only that something did.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	if i == len(got) && i == len(want) {
		return ""
	}
	around := func(s string) string {
		from, to := max(i-80, 0), min(i+80, len(s))
		return strconv.Quote(s[from:to])
	}
	return fmt.Sprintf("\nfirst difference at line %d, byte %d:\n got: %s\nwant: %s",
		strings.Count(want[:i], "\n")+1, i, around(got), around(want))
}

// StoredRunDirs gives the stored runs' directories, relative to this
// package, to the tests of check and export in package report_test (which
// import this package and so cannot live in it).
func StoredRunDirs() []string {
	var dirs []string
	for _, sr := range storedRuns {
		dirs = append(dirs, filepath.Join("testdata", filepath.FromSlash(sr.dir)))
	}
	return dirs
}
