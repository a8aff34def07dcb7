package report

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

// TestAttributionShown: a profiled run's summary and page show where the
// CPU went per case, series and against the reference; a run whose
// cells were not profiled shows nothing of it, and one whose stacks file
// is damaged says which cell's.
func TestAttributionShown(t *testing.T) {
	for _, c := range []struct {
		name   string
		run    string // real runs sampled with perf (their README.md)
		change func(t *testing.T, dir string)
		want   []string // in the summary, in this order
		page   []string // in the page
		err    string
	}{
		{name: "profiled", run: "testdata/profiled", want: []string{
			"where the CPU went by part of the path · rr (sampled stacks, µs of CPU per request", "bare (2 cells)", "bridge − bare", "overlay-encrypted − bare",
			"TUN and the user-space router", "total, kernel's count (/proc/stat)", "in softirq",
			"where the CPU went by part of the path · stream (sampled stacks, CPU s per GB"},
			page: []string{`id="tab-attribution-1"`, `id="tab-attribution-2"`, "Where the CPU went, by part of the path · stream"}},
		{name: "a sweep of sizes profiled", run: "testdata/profiled-pingpong", want: []string{
			"where the CPU went by part of the path (sampled stacks, µs of CPU per request", "bare (4 cells)", "bridge − bare", "total sampled"},
			page: []string{`id="tab-attribution-1"`}},
		{name: "stepped as a waterfall", run: "testdata/profiled", change: func(t *testing.T, dir string) {
			editMeta(t, dir, func(m *record.Meta) { m.Spec.Waterfall = true })
		}, want: []string{
			"layer by layer", "rr: parts that grew, µs/request", "stream: parts that grew, s/GB",
			"overlay → overlay-encrypted", "TUN and the user-space router +"},
			page: []string{`id="tab-waterfall"`, "rr: parts that grew"}},
		{name: "not profiled", run: "testdata/profiled", change: func(t *testing.T, dir string) {
			editMeta(t, dir, func(m *record.Meta) {
				for i := range m.Cells {
					m.Cells[i].Profile = nil
				}
			})
		}},
		{name: "a damaged stacks file", run: "testdata/profiled", change: func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, record.StacksFile(3)), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, err: "cell 3's stacks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(c.run)); err != nil {
				t.Fatal(err)
			}
			if c.change != nil {
				c.change(t, dir)
			}
			run, err := ReadRun(dir, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var sb bytes.Buffer
			err = Summary(&sb, run, "", false)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Summary: %v; want %q", err, c.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			out := sb.String()
			if c.want == nil && strings.Contains(out, "sampled stacks") {
				t.Errorf("an attribution without profiles:\n%s", out)
			}
			for _, w := range c.want {
				i := strings.Index(out, w)
				if i < 0 {
					t.Fatalf("summary lacks %q:\n%s", w, out)
				}
				out = out[i:]
			}
			runs, _ := Load([]string{dir})
			r, err := Build(runs, nil, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			html := filepath.Join(t.TempDir(), "report.html")
			if err := r.WriteHTML(html); err != nil {
				t.Fatal(err)
			}
			page, err := os.ReadFile(html)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.page {
				if !strings.Contains(string(page), w) {
					t.Errorf("page lacks %q", w)
				}
			}
			if c.page == nil && strings.Contains(string(page), "tab-attribution") {
				t.Error("the page shows an attribution")
			}
			if noted := strings.Contains(strings.Join(r.Notes, "\n"), "cell 3's stacks"); noted != (c.err != "") {
				t.Errorf("notes %q", r.Notes)
			}
		})
	}
}

// editMeta rewrites a run's run.json through fn.
func editMeta(t *testing.T, dir string, fn func(*record.Meta)) {
	t.Helper()
	path := filepath.Join(dir, record.MetaFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m record.Meta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	fn(&m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
