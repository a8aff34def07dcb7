package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
)

// waterfallRun writes a run of rr and stream on three modes, one layer
// more each, three repetitions interleaved: rr's round trip 40, 50 and 70
// µs at the median (90, 100, 130 at the 99th percentile), stream's CPU
// 2, 2.5 and 4 s per GB, softirq 20, 25 and 40 % of the busy time.
func waterfallRun(t *testing.T, waterfall bool) string {
	t.Helper()
	s := spec.Default()
	s.Name, s.Modes, s.Reference, s.Waterfall = "layers", []string{"bare", "veth-routed", "bridge"}, "bare", waterfall
	s.Tests = []workload.Test{{Name: "rr", Workload: "rr", Duration: time.Second}, {Name: "stream", Workload: "stream", Duration: time.Second}}
	from := time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC)
	meta := record.Meta{Status: "complete", Spec: s, Started: from}
	for _, m := range s.Modes {
		meta.Modes = append(meta.Modes, record.ModeMeta{Mode: m})
	}
	p50 := map[string]float64{"bare": 40, "veth-routed": 50, "bridge": 70}
	p99 := map[string]float64{"bare": 90, "veth-routed": 100, "bridge": 130}
	cpu := map[string]float64{"bare": 2, "veth-routed": 2.5, "bridge": 4}
	softirq := map[string]float64{"bare": 0.2, "veth-routed": 0.25, "bridge": 0.4}
	var lines []any
	idx := 0
	for rep := range 3 {
		drift := 1 + 0.01*float64(rep-1) // every mode alike within a repetition
		for _, mode := range s.Modes {
			for ti, w := range []string{"rr", "stream"} {
				start := from.Add(time.Duration(idx) * 2 * time.Second)
				c := record.Cell{Index: idx, Mode: mode, Case: w, Rep: rep, Chunk: rep, Start: start, End: start.Add(time.Second)}
				var end string
				if w == "rr" {
					end = fmt.Sprintf(`{"workload":"rr","kind":"end","type":"result","rr_mode":"tcp","trans_per_s":20000,"transactions":20000,"request_size":1,"response_size":1,"round_trip_us":{"p50":%g,"p99":%g,"max":500},"one_way_us_half_rtt":{"p50":20}}`,
						p50[mode]*drift, p99[mode]*drift)
				} else {
					busy := 2.0 * drift
					c.Kernel = &record.CellKernel{CPUSeconds: 4, UserSeconds: busy * (1 - softirq[mode]) / 2, SystemSeconds: busy * (1 - softirq[mode]) / 2, SoftirqSeconds: busy * softirq[mode], Bytes: 1e9}
					end = `{"workload":"stream","kind":"end","protocol":"tcp","duration_s":1,"streams":1,"sender_bytes":1000000000,"receiver_bytes":1000000000,"sender_bits_per_second":8e9,"receiver_bits_per_second":8e9}`
					lines = append(lines, record.Cost{Workload: "cost", Test: w, Mode: mode, Cell: idx, Case: w, Rep: rep, Seconds: 1,
						Client: record.Usage{CPUSeconds: cpu[mode] * drift / 2, Source: "cgroup"}, Server: record.Usage{CPUSeconds: cpu[mode] * drift / 2, Source: "cgroup"}})
				}
				lines = append(lines, record.Record{Workload: w, Kind: record.KindTotal, Mode: mode, Cell: idx, Case: w, Test: ti, Rep: rep, Data: []byte(end)})
				meta.Cells = append(meta.Cells, c)
				idx++
			}
		}
	}
	dir := filepath.Join(t.TempDir(), "run")
	writeRunDir(t, dir, meta, lines)
	return dir
}

// TestWaterfallSummaryAndReport: a run whose spec asks for the waterfall
// gets its step table in the summary and on the page, and a figure per
// figure stepped; the same run without it gets none of them.
func TestWaterfallSummaryAndReport(t *testing.T) {
	for _, on := range []bool{true, false} {
		dir := waterfallRun(t, on)
		run, err := ReadRun(dir, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var sum bytes.Buffer
		if err := Summary(&sum, run, "", false); err != nil {
			t.Fatal(err)
		}
		out := sum.String()
		_, table, _ := strings.Cut(out, "layer by layer:")
		rows := strings.Split(strings.TrimSpace(table), "\n")
		r, err := Build([]Run{run}, nil, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var figs []string
		for _, f := range r.Figures {
			if strings.HasPrefix(f.ID, "fig-waterfall") && len(f.SVG) > 0 {
				figs = append(figs, f.ID)
			}
		}
		page := r.SectionTables("")
		hasTable := false
		for _, tb := range page {
			hasTable = hasTable || tb.ID == "tab-waterfall"
		}
		if !on {
			if table != "" || len(figs) > 0 || hasTable {
				t.Errorf("without waterfall: step table %q, figures %v, page table %v; want none", table, figs, hasTable)
			}
			continue
		}
		// The heading, the columns, then a row per step: the base's
		// totals, each step's added figure with its interval.
		if len(rows) != 5 {
			t.Fatalf("step table:\n%s\nwant a heading, the columns and three steps", table)
		}
		for i, want := range [][]string{
			{"step", "rr: RTT p50 µs", "rr: RTT p99 µs", "stream: CPU s/GB", "stream: softirq %"},
			{"bare (base)", "40.0", "90.0", "2.00", "20.0"},
			{"bare → veth-routed", "+10.0 [", "+10.0 [", "+0.500 [", "+5.00 ["},
			{"veth-routed → bridge", "+20.0 [", "+30.0 [", "+1.50 [", "+15.0 ["},
		} {
			for _, w := range want {
				if !strings.Contains(rows[i+1], w) {
					t.Errorf("step table row %d %q lacks %q", i, rows[i+1], w)
				}
			}
		}
		if len(figs) != 4 || !hasTable {
			t.Errorf("page: waterfall figures %v, step table %v; want 4 figures and the table", figs, hasTable)
		}
	}
}
