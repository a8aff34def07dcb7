package report_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/report/export"
	"github.com/cnperf/cnperf/internal/report/export/exporttest"
)

// mixedRun writes a run of ping-pong and socket tests, made of the stored
// socket run and the stored ping-pong run's bare and bridge cells (moved
// after the socket run's), as cnperf writes a spec of both.
func mixedRun(t *testing.T) string {
	t.Helper()
	const base = "testdata/written-2026-11/"
	read := func(name string) map[string]any {
		b, err := os.ReadFile(base + name + "/run.json")
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	pp, meta := read("pingpong"), read("sockets")
	spec := meta["spec"].(map[string]any)
	entry := map[string]any{"workload": "pingpong"}
	for k, v := range pp["spec"].(map[string]any)["pingpong"].(map[string]any) {
		entry[k] = v
	}
	spec["tests"] = append([]any{entry}, spec["tests"].([]any)...)
	meta["sizes"] = pp["sizes"]
	cells := meta["cells"].([]any)
	moved := map[float64]int{}
	for _, c := range pp["cells"].([]any) {
		c := c.(map[string]any)
		if m := c["mode"]; m == "bare" || m == "bridge" {
			moved[c["index"].(float64)] = len(cells)
			c["index"] = len(cells)
			cells = append(cells, c)
		}
	}
	meta["cells"] = cells
	dir := filepath.Join(t.TempDir(), "both")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	lines, err := os.ReadFile(base + "sockets/samples.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(base + "pingpong/samples.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s map[string]any
		if json.Unmarshal(sc.Bytes(), &s) != nil || s["workload"] != "pingpong" {
			continue
		}
		at, ok := moved[s["cell"].(float64)]
		if !ok {
			continue
		}
		s["cell"] = at
		l, _ := json.Marshal(s)
		lines = append(append(lines, l...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "samples.jsonl"), lines, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRunOfBoth: a run of ping-pong beside socket tests is read as one
// run of each kind, and its summary and report show both: the sweep of
// sizes with its ratios, and every case with its changes.
func TestRunOfBoth(t *testing.T) {
	dir := mixedRun(t)
	runs, notes := report.Load([]string{dir})
	if len(runs) != 2 || !runs[0].Sweeps() || runs[1].Sweeps() || len(notes) > 0 {
		t.Fatalf("%d runs (%v), notes %v: want its ping-pong and its tests", len(runs), runs, notes)
	}
	if len(runs[0].PingPong) == 0 || len(runs[1].Records) == 0 || len(runs[1].PingPong) != 0 || len(runs[0].Records) != 0 {
		t.Errorf("ping-pong view: %d samples, %d records; tests view: %d samples, %d records",
			len(runs[0].PingPong), len(runs[0].Records), len(runs[1].PingPong), len(runs[1].Records))
	}
	for _, c := range runs[0].Meta.Cells {
		if c.Case != "" {
			t.Errorf("ping-pong view holds cell %d of %s", c.Index, c.Case)
		}
	}
	run, err := report.ReadRun(dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := report.Summary(&out, run, "", false); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"both ping-pong\n", "transfer MB/s", "both tests\n", "tcp (2 repetition(s); mean ± SD, % against bare", "bridge  50433 ±1783 (-45.5%)"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary has no %q:\n%s", want, text)
		}
	}
	r, err := report.Build(runs, nil, report.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	ids := func() []string {
		var out []string
		for _, tb := range r.Tables {
			out = append(out, tb.ID)
		}
		return out
	}()
	if len(r.Figures) == 0 || !slices.Contains(ids, "tab-summary-case0") || !slices.Contains(ids, "tab-summary-transfer") {
		t.Errorf("report: %d figures, tables %v: want the sweep's figures and the cases' tables", len(r.Figures), ids)
	}
}

// TestFeedOfBoth: the feed of a run of ping-pong and socket tests holds
// the results of both kinds, and every feed format takes it by its rules.
func TestFeedOfBoth(t *testing.T) {
	run, err := report.ReadRun(mixedRun(t), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	f := report.Feed(run, "")
	cases := map[string]bool{}
	for _, r := range f.Results {
		cases[r.Labels["workload"]] = true
	}
	if !cases["pingpong"] || !cases["stream"] {
		t.Errorf("feed holds the workloads %v: want pingpong and stream", cases)
	}
	for _, format := range []string{"openmetrics", "opensearch", "perfdash"} {
		var b bytes.Buffer
		if err := export.WriteFeed(&b, format, f, export.FeedOptions{Index: export.DefaultIndex}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		switch format {
		case "openmetrics":
			err = exporttest.CheckOpenMetrics(b.Bytes())
		case "opensearch":
			_, err = exporttest.CheckBulk(b.Bytes(), export.DefaultIndex)
		case "perfdash":
			_, err = exporttest.DecodePerfDash(b.Bytes())
		}
		if err != nil {
			t.Errorf("%s: %v", format, err)
		}
	}
}
