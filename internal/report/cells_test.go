package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// TestCellTCP: per series, in the run's order, retransmits and
// connections add up over the cells, RTT and window are means weighted by
// connections; cells without TCP_INFO count nowhere, and a run without
// any has no rows and prints no table.
func TestCellTCP(t *testing.T) {
	modes := []record.ModeMeta{{Mode: "bridge"}, {Mode: "bare"}}
	tests := []struct {
		name  string
		cells []record.Cell
		want  []analysis.TCPRow
	}{
		{"none recorded", []record.Cell{{Mode: "bare"}, {Mode: "bridge"}}, nil},
		{"series order, weighted means", []record.Cell{
			{Mode: "bare", TCP: &tcpinfo.Stats{Connections: 1, Retransmits: 2, RTTUS: 100, Cwnd: 10}},
			{Mode: "bare", TCP: &tcpinfo.Stats{Connections: 3, Retransmits: 1, RTTUS: 200, Cwnd: 2}},
			{Mode: "bare"},
			{Mode: "bridge", TCP: &tcpinfo.Stats{Connections: 2, RTTUS: 50, Cwnd: 10}},
			{Mode: "bridge", TCP: &tcpinfo.Stats{}}, // read nothing
		}, []analysis.TCPRow{
			{Mode: "bridge", Cells: 1, Connections: 2, RTTUS: 50, Cwnd: 10},
			{Mode: "bare", Cells: 2, Connections: 4, Retransmits: 3, RTTUS: 175, Cwnd: 4},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := record.Meta{Modes: modes, Cells: tt.cells}
			got, _ := analysis.TCPRows(m)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("clients' rows = %+v, want %+v", got, tt.want)
			}
			var sb strings.Builder
			if err := tcpTables(m)[0].write(&sb); err != nil {
				t.Fatal(err)
			}
			if (sb.Len() == 0) != (tt.want == nil) {
				t.Errorf("table %q for rows %+v", sb.String(), got)
			}
			for _, r := range tt.want {
				if !strings.Contains(sb.String(), r.Mode) {
					t.Errorf("table %q lacks %s", sb.String(), r.Mode)
				}
			}
		})
	}
}

// TestCellServerTCP: the servers' sides are summed per series and side,
// in the series' order and then ping, ping to pong, pong; a side no cell
// read is left out, an unknown side is ignored.
func TestCellServerTCP(t *testing.T) {
	modes := []record.ModeMeta{{Mode: "bare"}, {Mode: "bridge"}}
	side := func(n, retrans int64, rtt float64) *tcpinfo.Stats {
		return &tcpinfo.Stats{Connections: n, Retransmits: retrans, RTTUS: rtt, Cwnd: 10}
	}
	cells := []record.Cell{
		{Mode: "bridge", ServerTCP: map[string]*tcpinfo.Stats{"pong": side(1, 4, 300)}},
		{Mode: "bare", ServerTCP: map[string]*tcpinfo.Stats{"pong": side(1, 1, 100), "ping": side(2, 0, 50), "x": side(9, 9, 9)}},
		{Mode: "bare", ServerTCP: map[string]*tcpinfo.Stats{"pong": side(3, 2, 200)}},
		{Mode: "bare", TCP: side(1, 1, 1)},
	}
	m := record.Meta{Modes: modes, Cells: cells}
	_, got := analysis.TCPRows(m)
	want := []analysis.TCPRow{
		{Mode: "bare", Side: "ping", Cells: 1, Connections: 2, RTTUS: 50, Cwnd: 10},
		{Mode: "bare", Side: "pong", Cells: 2, Connections: 4, Retransmits: 3, RTTUS: 175, Cwnd: 10},
		{Mode: "bridge", Side: "pong", Cells: 1, Connections: 1, Retransmits: 4, RTTUS: 300, Cwnd: 10},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("servers' rows = %+v, want %+v", got, want)
	}
	var sb strings.Builder
	if err := tcpTables(m)[1].write(&sb); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ping → siege", "pong → ping", "bridge"} {
		if !strings.Contains(sb.String(), s) {
			t.Errorf("table %q lacks %q", sb.String(), s)
		}
	}
	if _, none := analysis.TCPRows(record.Meta{Modes: modes, Cells: cells[3:]}); none != nil {
		t.Error("rows for cells without the servers' sides")
	}
}

// TestKernelTables: a ping-pong run's cells with kernel records give one
// row per series in the run's order, per request from the cells'
// samples; cells without a record, or with a damaged one, count nowhere;
// a run without any prints no table and its cost table keeps its columns.
func TestKernelTables(t *testing.T) {
	modes := []record.ModeMeta{
		{Mode: "bridge", Bytes: 2e9, Usage: map[string]record.Usage{"ping": {CPUSeconds: 1}},
			Idle: &record.IdleCost{WindowSeconds: 2, Daemons: map[string]record.IdleDaemon{"router-siege": {CPUPercent: 1.5, MemoryBytes: 8e6, Source: "cgroup"}}}},
		{Mode: "bare", Bytes: 1e9, Usage: map[string]record.Usage{"ping": {CPUSeconds: 1}}},
	}
	k := func(soft float64, bytes int64) *record.CellKernel {
		return &record.CellKernel{CPUSeconds: 4, UserSeconds: 1, SystemSeconds: 0.5, SoftirqSeconds: soft, BusiestSoftirqPercent: 40, NetRX: 100, NetTX: 10, Bytes: bytes}
	}
	damaged := &record.CellKernel{CPUSeconds: 1, SoftirqSeconds: 5, Bytes: 1e9}
	tests := []struct {
		name    string
		cells   []record.Cell
		series  []string
		softirq map[string]string // series → its softirq s/GB cell
		costCol bool
	}{
		{"none recorded", []record.Cell{{Mode: "bare"}, {Mode: "bridge"}}, nil, nil, false},
		{"series order", []record.Cell{
			{Mode: "bare", Samples: 1000, Kernel: k(0.2, 1e9)},
			{Mode: "bridge", Samples: 1000, Kernel: k(0.6, 1e9)},
			{Mode: "bridge", Samples: 1000, Kernel: k(1.0, 1e9)},
			{Mode: "bare", Samples: 10},
			{Mode: "bare", Samples: 10, Kernel: damaged},
		}, []string{"bridge", "bare"}, map[string]string{"bare": "0.200", "bridge": "0.800 [0.000, 3.341]"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := record.Meta{Modes: modes, Cells: tt.cells}
			rows := analysis.KernelRows(m)
			var got []string
			for _, r := range rows {
				got = append(got, r.Series)
				if s := ciCell(r.SoftirqPerGB); s != tt.softirq[r.Series] {
					t.Errorf("%s softirq s/GB %q, want %q", r.Series, s, tt.softirq[r.Series])
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.series, ",") {
				t.Errorf("series %v, want %v", got, tt.series)
			}
			if len(rows) > 0 && (rows[0].SoftirqUSPerTrans.Mean != 800 || rows[1].Cells != 1) {
				t.Errorf("bridge softirq µs/req %v (want 800), bare cells %d (want 1)", rows[0].SoftirqUSPerTrans.Mean, rows[1].Cells)
			}
			var sb strings.Builder
			if err := kernelTable(m).write(&sb); err != nil {
				t.Fatal(err)
			}
			if (sb.Len() == 0) != (tt.series == nil) || (tt.series != nil && !strings.Contains(sb.String(), "softirq µs/req")) {
				t.Errorf("table %q for rows %+v", sb.String(), rows)
			}
			r := &Report{Runs: []Run{{Meta: m}}}
			r.addCost()
			var cost, kernel, idle *Table
			for i := range r.Tables {
				switch r.Tables[i].ID {
				case "tab-cost":
					cost = &r.Tables[i]
				case "tab-kernel":
					kernel = &r.Tables[i]
				case "tab-idle":
					idle = &r.Tables[i]
				}
			}
			if cost == nil || idle == nil || (kernel != nil) != tt.costCol {
				t.Fatalf("tables: cost %v, kernel %v, idle %v", cost != nil, kernel != nil, idle != nil)
			}
			has := strings.Contains(strings.Join(cost.Columns, "|"), "machine softirq s per GB")
			if has != tt.costCol {
				t.Errorf("cost table's kernel columns %v, want %v: %v", has, tt.costCol, cost.Columns)
			}
			if has {
				// bridge: 1.6 s of softirq over its 2 GB of cells.
				if last := cost.Rows[0][len(cost.Rows[0])-1].Text; last != "0.800" {
					t.Errorf("bridge's softirq s per GB %q, want 0.800", last)
				}
			}
			if idle.Rows[0][1].Text != "router-siege" || idle.Rows[0][3].Text != "1.50" {
				t.Errorf("idle row %+v", idle.Rows[0])
			}
		})
	}
}

func TestCellKernelSane(t *testing.T) {
	for _, tt := range []struct {
		name string
		k    *record.CellKernel
		want bool
	}{
		{"nil", nil, false},
		{"fine", &record.CellKernel{CPUSeconds: 2, UserSeconds: 1, SoftirqSeconds: 0.5, BusiestSoftirqPercent: 50}, true},
		{"no capacity", &record.CellKernel{}, false},
		{"parts past capacity", &record.CellKernel{CPUSeconds: 2, UserSeconds: 1.5, SystemSeconds: 1}, false},
		{"negative", &record.CellKernel{CPUSeconds: 2, SoftirqSeconds: -1}, false},
		{"share past 100", &record.CellKernel{CPUSeconds: 2, BusiestSoftirqPercent: 101}, false},
		{"negative bytes", &record.CellKernel{CPUSeconds: 2, Bytes: -1}, false},
		{"damaged pinned", &record.CellKernel{CPUSeconds: 2, Pinned: &record.CellKernel{}}, false},
		{"huge", &record.CellKernel{CPUSeconds: 1e300}, false},
	} {
		if got := tt.k.Sane(); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// flapRun is a bare run of one stream cell whose receiver moved nothing
// from 2 s to 3 s (10 intervals of 0.1 s) while the server's uplink was
// down, with or without the flap recorded.
func flapRun(flapped bool) Run {
	s := spec.Default()
	s.Name, s.Modes = "flap", []string{"bare"}
	s.Tests = []workload.Test{{Workload: "stream", Duration: 6 * time.Second}}
	cell := record.Cell{Index: 0, Mode: "bare", Case: "tcp", Start: time.Unix(0, 0), End: time.Unix(6, 0)}
	if flapped {
		cell.Flaps = []record.Flap{{Link: "server", At: 2, Down: 2.001, Up: 3.002}}
	}
	run := Run{Dir: "flap", Label: "flap", Meta: record.Meta{Status: "complete", Spec: s, Started: time.Unix(0, 0), Cells: []record.Cell{cell}}}
	add := func(kind, data string) {
		run.Records = append(run.Records, record.Record{Workload: "stream", Kind: kind, Mode: "bare", Case: "tcp", Data: []byte(data)})
	}
	for i := range 60 {
		start, bytes := float64(i)/10, 1e7
		if start >= 1.99 && start < 2.99 {
			bytes = 0
		}
		for _, side := range []string{"sender", "receiver"} {
			add("interval", fmt.Sprintf(`{"workload":"stream","kind":"interval","protocol":"tcp","stream":-1,"start":%g,"end":%g,"bytes":%g,"retransmits":%d,"side":"%s"}`, start, start+0.1, bytes, map[bool]int{true: 2}[bytes == 0], side))
		}
	}
	add(record.KindTotal, `{"workload":"stream","kind":"end","protocol":"tcp","duration_s":6,"streams":1,"sender_bytes":500000000,"receiver_bytes":500000000,"sender_bits_per_second":6.6e8,"receiver_bits_per_second":6.6e8}`)
	return run
}

// flapsTable is the link flaps table of the run's page, nil without one.
func flapsTable(t *testing.T, run Run) *Table {
	t.Helper()
	r, err := Build([]Run{run}, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Tables {
		if r.Tables[i].ID == "tab-flaps" {
			return &r.Tables[i]
		}
	}
	return nil
}

// TestFlapSection: a run whose link flapped gets the link flaps table,
// in the page and in text, with the stall and the retransmits; a run
// without flaps gets neither.
func TestFlapSection(t *testing.T) {
	for _, flapped := range []bool{true, false} {
		t.Run(fmt.Sprint(flapped), func(t *testing.T) {
			run := flapRun(flapped)
			tab := flapsTable(t, run)
			var text strings.Builder
			if err := flapTable(analysis.Flaps(run.Meta, run.Contents, func(m string) string { return m })).write(&text); err != nil {
				t.Fatal(err)
			}
			if !flapped {
				if tab != nil || text.Len() != 0 {
					t.Fatalf("a run without flaps has a flap table: %+v %q", tab, text.String())
				}
				return
			}
			if tab == nil || len(tab.Rows) != 1 {
				t.Fatalf("no link flaps table with one row: %+v", tab)
			}
			row := cellTexts(tab.Rows)[0]
			for _, want := range []string{"bare/", "stream/", "server/", "2.00–3.00/ | 1.00/ | 10/ | 0.10/ | 20/"} {
				if !strings.Contains(row, want) {
					t.Errorf("row %q lacks %q", row, want)
				}
			}
			if !strings.Contains(text.String(), "link flaps") || !strings.Contains(text.String(), "2.00–3.00") {
				t.Errorf("text table:\n%s", text.String())
			}
		})
	}
}

// TestPingPongFlapRows: a ping-pong run whose pong uplink flapped gets a
// row in the link flaps table counting requests, in the page and in
// text; a cell whose requests ended before its flap says so.
func TestPingPongFlapRows(t *testing.T) {
	s := spec.Default()
	s.Name, s.Modes = "ppflap", []string{"bare"}
	from := time.Unix(100, 0).UTC()
	at := func(sec float64) time.Time { return from.Add(time.Duration(sec * float64(time.Second))) }
	cells := []record.Cell{
		{Index: 0, Mode: "bare", Chunk: 0, Start: at(0.01), End: at(3), FlapsFrom: from, Flaps: []record.Flap{{Link: "pong", At: 1, Down: 1.001, Up: 2.002}}},
		{Index: 1, Mode: "bare", Chunk: 1, Start: at(10), End: at(10.5), FlapsFrom: at(10), Flaps: []record.Flap{{Link: "pong", At: 1, NotDone: true}}},
	}
	run := Run{Dir: "ppflap", Label: "ppflap", Meta: record.Meta{Status: "complete", Spec: s, Started: from, Cells: cells}}
	smp := func(cell, size int, start, ms float64, errText string) {
		sm := record.Sample{Workload: "pingpong", Mode: "bare", Cell: cell, Size: size, Length: size, Code: 200, Time: at(start), LatencyMS: ms, DurationMS: ms / 2, Retries: map[bool]int{true: 4}[ms > 1000]}
		if errText != "" {
			sm.Error, sm.Code, sm.Length = errText, 0, 0
		}
		run.PingPong = append(run.PingPong, sm)
	}
	for i := range 10 {
		smp(0, 100+i, float64(i)*0.1, 2, "")
	}
	smp(0, 200, 0.99, 1300, "") // held up: done at 2.29 s
	smp(0, 201, 2.29, 2, "")
	smp(1, 300, 10.0, 2, "")
	smp(1, 301, 10.1, 2, "")
	tab := flapsTable(t, run)
	if tab == nil || len(tab.Rows) != 2 {
		t.Fatalf("want a link flaps table with two ping-pong rows: %+v", tab)
	}
	rows := cellTexts(tab.Rows)
	for i, wants := range [][]string{
		{"pingpong/", "sizes 100–201/", "pong/", "1.00–2.00/ | 1.39/ | 1 requests, 4 retries/ | 0.29/", "1300000/"},
		{"sizes 300–301/", "not done (due 1.00)/ | –/", analysis.NotBeforeFlap},
	} {
		for _, want := range wants {
			if !strings.Contains(rows[i], want) {
				t.Errorf("row %d %q lacks %q", i, rows[i], want)
			}
		}
	}
	var text strings.Builder
	if err := flapTable(analysis.Flaps(run.Meta, run.Contents, func(m string) string { return m })).write(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "1 requests, 4 retries") {
		t.Errorf("text table:\n%s", text.String())
	}
}

// TestCellTablesAsBefore: the tables of what cells recorded (TCP_INFO,
// kernel time with pinned cores, the daemons at rest, link flaps of
// ping-pong and socket cells), which no stored run holds, print and write
// as they did before one table code served them all: testdata/cell-tables
// holds what that cnperf's `summary` and `report --tables` made of these
// synthetic runs.
func TestCellTablesAsBefore(t *testing.T) {
	for name, dir := range cellRuns(t, t.TempDir()) {
		t.Run(name, func(t *testing.T) {
			want := filepath.Join("testdata", "cell-tables", name)
			run, err := ReadRun(dir, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var sum bytes.Buffer
			if err := Summary(&sum, run, "", true); err != nil {
				t.Fatal(err)
			}
			if w, _ := os.ReadFile(want + ".summary.txt"); sum.String() != string(w) {
				t.Errorf("summary differs:%s", firstDiff(sum.String(), string(w)))
			}
			runs, notes := Load([]string{dir})
			r, err := Build(runs, notes, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			if _, err := r.WriteTables(out); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(want + ".tables")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				w, _ := os.ReadFile(filepath.Join(want+".tables", e.Name()))
				if g, _ := os.ReadFile(filepath.Join(out, e.Name())); string(g) != string(w) {
					t.Errorf("%s differs:%s", e.Name(), firstDiff(string(g), string(w)))
				}
			}
		})
	}
}

// writeRunDir writes a run directory as the runner does: its run.json,
// then its lines.
func writeRunDir(t *testing.T, dir string, meta record.Meta, lines []any) {
	t.Helper()
	w, err := record.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteMeta(meta); err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if err := w.Append(l); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
}

// cellRuns writes a ping-pong run and a run of stream and rr into out,
// each cell with kernel time (pinned cores in bridge), the ping-pong
// cells with TCP_INFO, both with daemons at rest and flapped links.
func cellRuns(t *testing.T, out string) map[string]string {
	dirs := map[string]string{}
	kern := func(i int, pinned bool) *record.CellKernel {
		k := &record.CellKernel{CPUSeconds: 8, UserSeconds: 0.7 + 0.013*float64(i), SystemSeconds: 0.31 + 0.017*float64(i), SoftirqSeconds: 0.23 + 0.011*float64(i),
			BusiestCore: 1, BusiestSoftirqPercent: 30 + float64(i), NetRX: uint64(1000 + 37*i), NetTX: uint64(200 + 11*i), Bytes: int64(3e8 + 7e6*float64(i))}
		if pinned {
			k.Pinned = &record.CellKernel{Cores: []int{0, 1}, CPUSeconds: 2, SystemSeconds: 0.11 + 0.003*float64(i), SoftirqSeconds: 0.07 + 0.002*float64(i), UserSeconds: 0.2}
		}
		return k
	}
	tcp := func(i int) *tcpinfo.Stats {
		return &tcpinfo.Stats{Connections: int64(10 + i), Retransmits: int64(i % 3), RTTUS: 51.3 + float64(i), Cwnd: 10 + 0.3*float64(i)}
	}
	write := func(name string, meta record.Meta, lines []any) {
		dirs[name] = filepath.Join(out, name)
		writeRunDir(t, dirs[name], meta, lines)
	}
	from := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	at := func(sec float64) time.Time { return from.Add(time.Duration(sec * float64(time.Second))) }
	idle := &record.IdleCost{WindowSeconds: 2, Daemons: map[string]record.IdleDaemon{"router-siege": {CPUPercent: 1.5, MemoryBytes: 8e6, Source: "cgroup"}, "etcd": {CPUPercent: 0.3, MemoryBytes: 3e7, Source: "proc", Nodes: 2}}}

	// ping-pong: two modes, cells of three chunks, kernel (pinned in bridge), TCP, servers' TCP, flaps.
	for _, pinned := range []bool{true} {
		s := spec.Default()
		s.Name, s.Modes, s.Reference = "ppcmp", []string{"bare", "bridge"}, "bare"
		meta := record.Meta{Status: "complete", Spec: s, Started: from, Sizes: 3,
			Modes: []record.ModeMeta{{Mode: "bare", Idle: idle}, {Mode: "bridge"}}}
		var lines []any
		for i := range 6 {
			mode := s.Modes[i%2]
			c := record.Cell{Index: i, Mode: mode, Chunk: i / 2, Start: at(float64(i) * 4), End: at(float64(i)*4 + 3), FlapsFrom: at(float64(i) * 4),
				Kernel: kern(i, pinned && mode == "bridge"), TCP: tcp(i), ServerTCP: map[string]*tcpinfo.Stats{"ping": tcp(i + 1), "pong": tcp(i + 2), "ping_to_pong": tcp(i + 3)}}
			if i == 2 {
				c.Flaps = []record.Flap{{Link: "pong", At: 1, Down: 1.001, Up: 2.002}}
			}
			if i == 3 {
				c.Flaps = []record.Flap{{Link: "pong", At: 1, NotDone: true}}
			}
			for j := range 30 {
				size := 100 * (1 + j%3)
				st := float64(i)*4 + float64(j)*0.1
				sm := record.Sample{Workload: "pingpong", Mode: mode, Cell: i, Size: size, Rep: j / 3, Length: size, Code: 200, Time: at(st), LatencyMS: 2 + float64(j%5), DurationMS: 1 + float64(j%4)*0.3}
				if i == 2 && j == 10 {
					sm.LatencyMS, sm.Retries = 1300, 3
				}
				if i == 2 && j == 11 {
					sm.Error, sm.Code, sm.Length = "timeout", 0, 0
				}
				lines = append(lines, sm)
				c.Samples++
			}
			meta.Cells = append(meta.Cells, c)
		}
		write("pingpong", meta, lines)
	}

	// sockets: stream and rr, flaps on a stream cell, kernel on every cell.
	s := spec.Default()
	s.Name, s.Modes, s.Reference = "skcmp", []string{"bare", "bridge"}, "bare"
	s.Tests = []workload.Test{{Workload: "stream", Duration: 6 * time.Second}, {Workload: "rr", Duration: 6 * time.Second}}
	meta := record.Meta{Status: "complete", Spec: s, Started: from, Modes: []record.ModeMeta{{Mode: "bare", Idle: idle}, {Mode: "bridge"}}}
	var lines []any
	idx := 0
	for rep := range 2 {
		for _, mode := range s.Modes {
			for ti, w := range []string{"stream", "rr"} {
				c := record.Cell{Index: idx, Mode: mode, Case: w, Rep: rep, Chunk: rep, Start: at(float64(idx) * 7), End: at(float64(idx)*7 + 6), Kernel: kern(idx, mode == "bridge")}
				flapped := idx == 2 || idx == 1
				if flapped {
					c.Flaps = []record.Flap{{Link: "server", At: 2, Down: 2.001, Up: 3.002}}
				}
				add := func(kind, data string) {
					lines = append(lines, record.Record{Workload: w, Kind: kind, Mode: mode, Cell: idx, Case: w, Test: ti, Rep: rep, Data: []byte(data)})
				}
				for i := range 60 {
					start, bytes := float64(i)/10, 1e7+float64(idx)*1e5
					if flapped && start >= 1.99 && start < 2.99 {
						bytes = 0
					}
					if w == "stream" {
						for _, side := range []string{"sender", "receiver"} {
							add("interval", fmt.Sprintf(`{"workload":"stream","kind":"interval","protocol":"tcp","stream":-1,"start":%g,"end":%g,"bytes":%g,"retransmits":%d,"side":"%s"}`, start, start+0.1, bytes, map[bool]int{true: 2}[bytes == 0], side))
						}
					} else {
						add("interval", fmt.Sprintf(`{"workload":"rr","kind":"interval","start_s":%g,"end_s":%g,"transactions":%g,"lost":%d,"round_trip_p99_us":%g}`, start, start+0.1, bytes/1e4, map[bool]int{true: 1}[bytes == 0], 90+float64(i)))
					}
				}
				if w == "stream" {
					add(record.KindTotal, fmt.Sprintf(`{"workload":"stream","kind":"end","protocol":"tcp","duration_s":6,"streams":1,"sender_bytes":%d,"receiver_bytes":%d,"sender_bits_per_second":%g,"receiver_bits_per_second":%g}`, 500000000+idx*1000, 500000000+idx*1000, 6.6e8+float64(idx)*1e6, 6.6e8+float64(idx)*1e6))
				} else {
					add(record.KindTotal, fmt.Sprintf(`{"workload":"rr","kind":"end","type":"result","rr_mode":"tcp","trans_per_s":%d,"transactions":%d,"request_size":1,"response_size":1,"round_trip_us":{"p50":40,"p99":90,"max":%d},"one_way_us_half_rtt":{"p50":20},"tcp_info":{"connections":1,"retransmits":%d,"rtt_us":40,"cwnd":10}}`, 5000+idx*7, 30000+idx*40, 900+idx, idx%3))
				}
				lines = append(lines, record.Cost{Workload: "cost", Test: w, Mode: mode, Cell: idx, Case: w, Rep: rep, Seconds: 6, Client: record.Usage{CPUSeconds: 1.1 + float64(idx)*0.01, MemoryPeak: 1e7, Source: "cgroup"}, Server: record.Usage{CPUSeconds: 0.9, MemoryPeak: 2e7, Source: "cgroup"}})
				meta.Cells = append(meta.Cells, c)
				idx++
			}
		}
	}
	write("sockets", meta, lines)
	return dirs
}
