package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/figure"
)

// profiledRun is a run in dir whose cells (series, case, hz, requests,
// stacks; nil stacks: not profiled) are written as the sampler writes them.
func profiledRun(t *testing.T, cells []profiledCell) Run {
	t.Helper()
	run := Run{Dir: t.TempDir()}
	for i, c := range cells {
		cell := record.Cell{Index: i, Mode: c.series, Case: c.kase, Samples: c.requests}
		if c.bytes > 0 {
			cell.Kernel = &record.CellKernel{Bytes: c.bytes}
		}
		if c.stacks != nil {
			cell.Profile = &record.CellProfile{Hz: c.hz, File: record.StacksFile(i)}
			if err := record.WriteStacks(filepath.Join(run.Dir, record.StacksFile(i)), c.stacks); err != nil {
				t.Fatal(err)
			}
		}
		if !c.unlisted {
			run.Meta.Modes = append(run.Meta.Modes, record.ModeMeta{Mode: c.series})
		}
		run.Meta.Cells = append(run.Meta.Cells, cell)
	}
	return run
}

type profiledCell struct {
	series, kase string
	hz, requests int
	bytes        int64
	stacks       record.Stacks
	unlisted     bool
}

func TestProfiles(t *testing.T) {
	s := func(n uint64) record.Stacks {
		return record.Stacks{"server;tcp_sendmsg_[k]": n, "idle;do_idle_[k]": 2 * n}
	}
	for name, tc := range map[string]struct {
		cells    []profiledCell
		want     []string // "SERIES cells samples hz work unit"
		notes    int
		stackOut map[string]uint64 // of the first series
	}{
		"merged per series": {
			cells: []profiledCell{{series: "bare", hz: 99, requests: 10, stacks: s(1)}, {series: "bridge", hz: 99, requests: 5, stacks: s(2)},
				{series: "bare", hz: 99, requests: 20, stacks: s(3)}, {series: "bridge", requests: 7}},
			want:     []string{"bare 2 12 99 30 request", "bridge 1 6 99 5 request"},
			stackOut: map[string]uint64{"server;tcp_sendmsg_[k]": 4, "idle;do_idle_[k]": 8},
		},
		"rates differ: no unit": {
			cells: []profiledCell{{series: "bare", hz: 99, requests: 10, stacks: s(1)}, {series: "bare", hz: 499, requests: 10, stacks: s(1)}},
			want:  []string{"bare 2 6 0 0 "},
		},
		"socket cells: bytes moved": {
			cells: []profiledCell{{series: "bare", kase: "rr tcp", hz: 99, requests: 10, bytes: 2e9, stacks: s(1)},
				{series: "bare", kase: "stream tcp", hz: 99, requests: 10, bytes: 1e9, stacks: s(1)}},
			want: []string{"bare 2 6 99 3 GB"},
		},
		"a socket cell without bytes: no unit": {
			cells: []profiledCell{{series: "bare", kase: "rr tcp", hz: 99, requests: 10, bytes: 2e9, stacks: s(1)}, {series: "bare", kase: "rr tcp", hz: 99, stacks: s(1)}},
			want:  []string{"bare 2 6 99 0 "},
		},
		"ping-pong and socket cells: no unit": {
			cells: []profiledCell{{series: "bare", hz: 99, requests: 10, stacks: s(1)}, {series: "bare", kase: "rr tcp", hz: 99, bytes: 1e9, stacks: s(1)}},
			want:  []string{"bare 2 6 99 0 "},
		},
		"unprofiled run": {cells: []profiledCell{{series: "bare", requests: 10}}},
		"a file missing is a note": {
			cells: []profiledCell{{series: "bare", hz: 99, requests: 10, stacks: s(1)}, {series: "bare", hz: 99, requests: 10, stacks: s(1)}},
			want:  []string{"bare 1 3 99 10 request"}, notes: 1,
		},
	} {
		t.Run(name, func(t *testing.T) {
			run := profiledRun(t, tc.cells)
			if tc.notes > 0 {
				if err := os.Remove(filepath.Join(run.Dir, record.StacksFile(1))); err != nil {
					t.Fatal(err)
				}
			}
			ps, notes := Profiles(run)
			var got []string
			for _, p := range ps {
				got = append(got, fmt.Sprintf("%s %d %d %d %g %s", p.Series, p.Cells, p.Samples, p.Hz, p.Work, p.Unit))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(notes) != tc.notes {
				t.Errorf("got %q, notes %q; want %q, %d notes", got, notes, tc.want, tc.notes)
			}
			for k, v := range tc.stackOut {
				if ps[0].Stacks[k] != v {
					t.Errorf("%s: %d samples, want %d", k, ps[0].Stacks[k], v)
				}
			}
		})
	}
}

// flameFrames walks a drawn graph: each frame's name, width and fill,
// keyed by its path from the root.
func flameFrames(t *testing.T, r *Report, id string) map[string]flameDrawnFrame {
	t.Helper()
	for _, fg := range r.Figures {
		if fg.ID != id {
			continue
		}
		out := map[string]flameDrawnFrame{}
		var walk func(n *figure.FlameNode, path string, parent float64)
		walk = func(n *figure.FlameNode, path string, parent float64) {
			var sum float64
			for _, c := range n.Children {
				sum += c.Value
				walk(c, path+";"+c.Name, n.Value)
			}
			if sum > n.Value*(1+1e-9) {
				t.Errorf("%s: children %v wider than the frame %v", path, sum, n.Value)
			}
			out[path] = flameDrawnFrame{n.Value, n.Fill.R, n.Fill.B, n.Tooltip}
		}
		walk(fg.Chart.(figure.Flame).Root, "all", 0)
		return out
	}
	t.Fatalf("no figure %s", id)
	return nil
}

type flameDrawnFrame struct {
	width     float64
	red, blue uint8
	tooltip   string
}

func TestFlameGraphs(t *testing.T) {
	ref := record.Stacks{"server;tcp_sendmsg_[k]": 50, "server;nf_hook_slow_[k]": 10, "idle;do_idle_[k]": 40}
	series := record.Stacks{"server;tcp_sendmsg_[k]": 50, "server;br_handle_frame_[k]": 30, "idle;do_idle_[k]": 20}
	run := profiledRun(t, []profiledCell{{series: "bare", hz: 100, requests: 100, stacks: ref}, {series: "bridge", hz: 100, requests: 100, stacks: series}})
	r := &Report{Runs: []Run{run}}
	r.addFlames("bare")
	var ids []string
	for _, fg := range r.Figures {
		ids = append(ids, fg.ID)
	}
	if strings.Join(ids, " ") != "fig-flame-0 fig-flame-1 fig-flamediff-1" || len(r.Notes) != 0 {
		t.Fatalf("figures %v, notes %v", ids, r.Notes)
	}
	own := flameFrames(t, r, "fig-flame-1")
	if f := own["all;server;br_handle_frame_[k]"]; f.width != 30 || !strings.Contains(f.tooltip, "samples: 30, 30.00 % of bridge's, 3000 µs CPU per request") {
		t.Errorf("bridge's br_handle_frame: %+v", f)
	}
	diff := flameFrames(t, r, "fig-flamediff-1")
	// Per request: 1 sample = 1/100 s / 100 requests = 100 µs.
	for path, want := range map[string]struct {
		width     float64
		red, blue uint8 // 255: red (grew) or blue (shrank) at full strength or fading
	}{
		"all;server;tcp_sendmsg_[k]":     {5000, 255, 235}, // the same in both: neither colour
		"all;server;br_handle_frame_[k]": {1500, 255, 0},   // only in bridge, the largest change: full red
		"all;server;nf_hook_slow_[k]":    {500, 156, 255},  // only in bare: blue, a third of the largest change
		"all;idle":                       {3000, 78, 255},  // shrank by 2000 µs of 3000
		"all;server":                     {7000, 255, 78},  // grew by 2000 µs of 3000
	} {
		got := diff[path]
		if got.width != want.width || got.red != want.red || got.blue != want.blue {
			t.Errorf("%s: width %v, red %d, blue %d; want %+v", path, got.width, got.red, got.blue, want)
		}
	}
	if tt := diff["all;server;nf_hook_slow_[k]"].tooltip; !strings.Contains(tt, "bridge: 0 µs CPU per request (samples: 0)") || !strings.Contains(tt, "change -1000 µs") {
		t.Errorf("nf_hook_slow's tooltip: %q", tt)
	}
}

func TestFlameGraphBounds(t *testing.T) {
	// 3000 distinct leaves under two contexts, a few wide, most narrow.
	s := record.Stacks{}
	for i := range 3000 {
		n := uint64(1)
		if i%100 == 0 {
			n = 500
		}
		s[fmt.Sprintf("server;f%d;g%d", i%700, i)] = n
	}
	s["idle;"+strings.Repeat("deep;", 200)+"leaf"] = 9000
	run := profiledRun(t, []profiledCell{{series: "bare", hz: 99, stacks: s}})
	r := &Report{Runs: []Run{run}}
	r.addFlames("bare")
	frames := flameFrames(t, r, "fig-flame-0")
	if len(frames) > flameMaxFrames {
		t.Errorf("%d frames drawn, more than %d", len(frames), flameMaxFrames)
	}
	total := frames["all"].width
	depth := 0
	for path, f := range frames {
		if f.width < flameMinShare*total {
			t.Errorf("%s: %v of %v drawn", path, f.width, total)
		}
		depth = max(depth, strings.Count(path, ";"))
	}
	if depth != flameMaxDepth {
		t.Errorf("deepest frame at %d, want the cut at %d", depth, flameMaxDepth)
	}
	if len(r.Figures[0].SVG) > 120_000 {
		t.Errorf("the graph's SVG is %d bytes", len(r.Figures[0].SVG))
	}
}

// TestProfiledRun reads a stored run with real stacks (testdata/profiled-rr,
// its README says how it was made): a flame graph per series, bridge's
// against bare, and the exported stacks holding every sample the cells
// stored.
func TestProfiledRun(t *testing.T) {
	dir := filepath.Join("testdata", "profiled-rr")
	runs, notes := Load([]string{dir})
	if len(runs) != 1 {
		t.Fatalf("Load: %v", notes)
	}
	r, err := Build(runs, notes, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	size := 0
	for _, fg := range r.Figures {
		if strings.HasPrefix(fg.ID, "fig-flame") {
			ids = append(ids, fg.ID)
			size += len(fg.SVG)
		}
	}
	if strings.Join(ids, " ") != "fig-flame-0 fig-flame-1 fig-flamediff-1" || size > 3*120_000 {
		t.Errorf("flame figures %v, %d bytes of SVG", ids, size)
	}
	// rr's cells: CPU per transaction, their rate times their time.
	ps, _ := Profiles(runs[0])
	for _, p := range ps {
		if p.Unit != "transaction" || !(p.Work > 1000) {
			t.Errorf("%s: %g %s", p.Series, p.Work, p.Unit)
		}
	}
	var stored uint64
	for _, c := range runs[0].Meta.Cells {
		if c.Profile == nil {
			t.Fatalf("cell %d was not profiled", c.Index)
		}
		stored += c.Profile.Samples
	}
	out := t.TempDir()
	files, notes, err := ExportStacks(runs[0], out)
	if err != nil || len(notes) > 0 || len(files) != 2 {
		t.Fatalf("export: %v, %v, %v", files, notes, err)
	}
	var exported uint64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			count, err := strconv.ParseUint(line[strings.LastIndexByte(line, ' ')+1:], 10, 64)
			if err != nil || !strings.Contains(line, ";") {
				t.Fatalf("%s: %q: %v", f, line, err)
			}
			exported += count
		}
	}
	if exported != stored || stored == 0 {
		t.Errorf("exported %d samples, the cells stored %d", exported, stored)
	}
}
