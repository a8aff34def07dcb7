package report

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/cost"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/figure"
	"github.com/cnperf/cnperf/internal/spec"
)

// synthetic makes a run of n samples per mode whose transfer rate falls with
// a mode-specific factor, like a real run's shape.
func synthetic(modes []string, n int, seed uint64) Run {
	rng := rand.New(rand.NewPCG(seed, 1))
	s := spec.Default()
	s.Name, s.Modes = "synthetic", modes
	r := Run{Dir: "synthetic", Label: "synthetic", Meta: record.Meta{Status: "complete", Spec: s, ReceiveWindow: 131072, Started: time.Unix(0, 0)}}
	for i, m := range modes {
		factor := 1 - 0.08*float64(i)
		for j := 0; j < n; j++ {
			size := 1 + rng.IntN(500000)
			ms := (0.1 + float64(size)/1e9*1000/factor) * (1 + 0.2*rng.Float64())
			r.PingPong = append(r.PingPong, record.Sample{Workload: "pingpong", Mode: m, Size: size, Rep: j % 3,
				DurationMS: ms, LatencyMS: ms + 0.1, Length: size, Code: 200})
		}
	}
	return r
}

var allModes = []string{"bare", "host", "bridge", "macvlan", "overlay"}

func TestBuildHasTheFiguresAndTables(t *testing.T) {
	r, err := Build([]Run{synthetic(allModes, 2000, 1)}, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, f := range r.Figures {
		ids[f.ID] = true
		if !strings.HasPrefix(string(f.SVG), "<?xml") && !strings.Contains(string(f.SVG), "<svg") {
			t.Errorf("%s is not SVG", f.ID)
		}
	}
	for _, want := range []string{"fig-transfer", "fig-latency", "fig-rps", "fig-loss-transfer", "fig-loss-latency", "fig-impacts", "fig-transfer-0", "fig-transfer-4", "fig-latency-4", "fig-rps-0"} {
		if !ids[want] {
			t.Errorf("figure %s missing (have %v)", want, ids)
		}
	}
	tabs := map[string]int{}
	for _, tb := range r.Tables {
		tabs[tb.ID] = len(tb.Rows)
	}
	for id, rows := range map[string]int{"tab-runs": 1, "tab-summary-transfer": 5, "tab-summary-latency": 5, "tab-smallbig": 15, "tab-deviation": 5} {
		if tabs[id] != rows {
			t.Errorf("table %s has %d rows, want %d", id, tabs[id], rows)
		}
	}
	if r.Split != 3*131072 || r.Reference != "bare" {
		t.Errorf("split %d reference %q", r.Split, r.Reference)
	}
	// The synthetic overlay is 32 % slower: its transfer median must be worse.
	for _, row := range r.Data.Summary["transfer"] {
		if row.Series == "overlay" && (row.Median.Class != "worse" || row.Median.Percent > -20) {
			t.Errorf("overlay median: %+v", row.Median)
		}
	}
}

func TestBadInputIsReportedNotFatal(t *testing.T) {
	run := synthetic([]string{"bare", "overlay"}, 300, 2)
	cases := []struct {
		name    string
		runs    []Run
		opts    func(*Options)
		wantErr bool
		note    string
	}{
		{"reference not in data", []Run{run}, func(o *Options) { o.Reference = "macvlan" }, false, `reference mode "macvlan" is not in the data`},
		{"no runs", nil, nil, true, ""},
		{"no successful samples", []Run{{Dir: "x", Label: "x", Meta: record.Meta{Spec: spec.Default()}}}, nil, true, ""},
		{"no receive window", []Run{func() Run { r := run; r.Meta.ReceiveWindow = 0; return r }()}, nil, false, "small/big split is left out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			if c.opts != nil {
				c.opts(&o)
			}
			r, err := Build(c.runs, nil, o)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if c.note != "" && !strings.Contains(strings.Join(r.Notes, "\n"), c.note) {
				t.Errorf("notes %q lack %q", r.Notes, c.note)
			}
		})
	}
}

func TestLoadSkipsWhatItCannotRead(t *testing.T) {
	tmp := t.TempDir()
	// A run killed mid-write: the last line is cut.
	dir := filepath.Join(tmp, "cut")
	w, err := record.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := synthetic([]string{"bare"}, 10, 3)
	run.Meta.Status = "running"
	if err := w.WriteMeta(run.Meta); err != nil {
		t.Fatal(err)
	}
	for _, s := range run.PingPong {
		if err := w.Append(s); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	f, _ := os.OpenFile(filepath.Join(dir, record.SamplesFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"workload":"pingpong","mode":"bare","si`)
	f.Close()
	notRun := filepath.Join(tmp, "empty")
	os.Mkdir(notRun, 0o755)
	runs, notes := Load([]string{dir, notRun, filepath.Join(tmp, "missing")})
	if len(runs) != 1 || len(runs[0].PingPong) != 10 {
		t.Fatalf("loaded %d runs", len(runs))
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{"truncated", "skipped " + notRun, "missing", "the run did not finish (status running)"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
	r, err := Build(runs, notes, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(tmp, "r.html")
	if err := r.WriteHTML(html); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(html)
	if !strings.Contains(string(b), "What was skipped") || strings.Contains(string(b), "http://") && !strings.Contains(string(b), "http://www.w3.org") {
		t.Errorf("page lacks the notes or refers to the network")
	}
}

func TestTablesJSONHasNoNaN(t *testing.T) {
	r, err := Build([]Run{synthetic([]string{"bare", "overlay"}, 50, 4)}, nil, Options{Bins: 400, SplitK: 3, Same: 2, Smooth: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := r.WriteTables(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tables.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("tables.json: %v", err)
	}
	if !strings.Contains(string(b), "null") {
		t.Errorf("400 bins over 50 samples must leave empty bins, written as null")
	}
}

// BenchmarkReport200k builds and writes the report of 200,000 samples
// (5 modes x 40,000): the goal is well under 10 s on this 2-core machine.
func BenchmarkReport200k(b *testing.B) {
	run := synthetic(allModes, 40000, 5)
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		r, err := Build([]Run{run}, nil, DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		if err := r.WriteHTML(filepath.Join(dir, "r.html")); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCostTableAndCPUFigure(t *testing.T) {
	run := synthetic([]string{"bare", "overlay"}, 200, 6)
	run.Meta.Modes = []record.ModeMeta{
		{Mode: "bare", Bytes: 2e9, Usage: map[string]process.Usage{"ping": {Source: "proc", CPUSeconds: 3, UserSeconds: 1, SystemSeconds: 2, MemoryPeak: 20e6}, "pong": {Source: "proc", CPUSeconds: 1}}},
		{Mode: "overlay", Bytes: 2e9, Usage: map[string]process.Usage{"ping": {Source: "cgroup", CPUSeconds: 4}, "pong": {Source: "cgroup", CPUSeconds: 2}}},
	}
	run.Meta.Memory = &record.MemoryMeta{CommittedBefore: 100e6, CommittedPeak: 150e6, CommittedDelta: 50e6}
	t0 := time.Unix(1000, 0)
	for i := 0; i < 5; i++ {
		run.CPU = append(run.CPU, cost.CPUSample{Workload: "cpu", Time: t0.Add(time.Duration(i+1) * time.Second), Seconds: 1, All: 50, Cores: []float64{100, 0}})
	}
	r, err := Build([]Run{run}, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var tab *Table
	for i := range r.Tables {
		if r.Tables[i].ID == "tab-cost" {
			tab = &r.Tables[i]
		}
	}
	if tab == nil || len(tab.Rows) != 2 {
		t.Fatalf("cost table: %+v", tab)
	}
	// bare: (3 + 1) CPU s over 2 GB = 2.00 s/GB; overlay: 6 / 2 = 3.00.
	if tab.Rows[0][4].Text != "2.00" || tab.Rows[1][4].Text != "3.00" || !strings.Contains(tab.Caption, "50.0 MB more") {
		t.Errorf("cost rows %v, caption %q", tab.Rows, tab.Caption)
	}
	found := false
	for _, f := range r.Figures {
		if f.ID == "fig-cpu" {
			c, ok := f.Chart.(figure.Chart)
			found = ok && len(c.Series) == 3 // all cores + 2 cores
		}
	}
	if !found {
		t.Error("no CPU-per-core figure with all + 2 cores")
	}
}
