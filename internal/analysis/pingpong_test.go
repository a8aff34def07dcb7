package analysis_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
)

func ok(mode string, size int, durMS, latMS float64) record.Sample {
	return record.Sample{Workload: "pingpong", Mode: mode, Size: size, Length: size, Code: 200, DurationMS: durMS, LatencyMS: latMS}
}

// samples: bare has 3 good samples and a 503; overlay has 2 good samples,
// one with Error set, one with a short body and one without a duration.
// Transfer rates (MB/s = Length*1000/DurationMS/1e6):
// bare 1, 2, 2 -> median 2; overlay 0.5, 1.5 -> median 1.
func samples() []record.Sample {
	return []record.Sample{
		ok("bare", 1000, 1, 2),
		ok("overlay", 1000, 2, 4),
		ok("bare", 2000, 1, 3),
		{Workload: "pingpong", Mode: "bare", Size: 1000, Length: 0, Code: 503, DurationMS: 10, LatencyMS: 10},
		ok("overlay", 3000, 2, 6),
		ok("bare", 4000, 2, 5),
		{Workload: "pingpong", Mode: "overlay", Size: 1000, Length: 1000, Code: 200, DurationMS: 1, LatencyMS: 1, Error: "connection reset by peer"},
		{Workload: "pingpong", Mode: "overlay", Size: 1000, Length: 999, Code: 200, DurationMS: 1, LatencyMS: 1}, // short body
		ok("overlay", 1000, 0, 1),     // no inner duration
		ok("macvlan", 1000, 0.001, 1), // not a requested mode: ignored
	}
}

// rates are cell rates by mode, the i-th of a mode from chunk i: overlay
// ran chunks 0 and 1 at half bare's rate there.
var rates = map[string][]float64{"bare": {100, 300, 200}, "overlay": {50, 150}, "host": {1}}

// cellRates turns rates by mode into cells, the i-th rate of a mode from
// chunk i.
func cellRates(m map[string][]float64) []analysis.CellRate {
	var out []analysis.CellRate
	for mode, rs := range m {
		for i, r := range rs {
			out = append(out, analysis.CellRate{Mode: mode, Chunk: i, Rate: r})
		}
	}
	return out
}

func nan() float64 { return math.NaN() }

func eq(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

func checkRows(t *testing.T, got, want []analysis.ModeRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Mode != w.Mode || g.Samples != w.Samples || g.Failed != w.Failed {
			t.Errorf("row %d: mode/samples/failed = %s/%d/%d, want %s/%d/%d", i, g.Mode, g.Samples, g.Failed, w.Mode, w.Samples, w.Failed)
		}
		fields := []struct {
			name      string
			got, want float64
		}{
			{"TransferMBs", g.TransferMBs, w.TransferMBs},
			{"InnerMS", g.InnerMS, w.InnerMS},
			{"LatencyMS", g.LatencyMS, w.LatencyMS},
			{"RPS", g.RPS, w.RPS},
			{"TransferRatio", g.TransferRatio, w.TransferRatio},
			{"InnerRatio", g.InnerRatio, w.InnerRatio},
			{"LatencyRatio", g.LatencyRatio, w.LatencyRatio},
			{"RPSRatio", g.RPSRatio, w.RPSRatio},
		}
		for _, f := range fields {
			if !eq(f.got, f.want) {
				t.Errorf("row %d (%s): %s = %v, want %v", i, w.Mode, f.name, f.got, f.want)
			}
		}
	}
}

func TestPingPong(t *testing.T) {
	bare := analysis.ModeRow{Mode: "bare", Samples: 3, Failed: 1, TransferMBs: 2, InnerMS: 1, LatencyMS: 3, RPS: 200}
	overlay := analysis.ModeRow{Mode: "overlay", Samples: 2, Failed: 3, TransferMBs: 1, InnerMS: 2, LatencyMS: 5, RPS: 100}
	empty := analysis.ModeRow{Mode: "bridge", TransferMBs: nan(), InnerMS: nan(), LatencyMS: nan(), RPS: nan()}
	hostRow := analysis.ModeRow{Mode: "host", TransferMBs: nan(), InnerMS: nan(), LatencyMS: nan(), RPS: 1}
	withRatios := func(r analysis.ModeRow, tr, in, lat, rps float64) analysis.ModeRow {
		r.TransferRatio, r.InnerRatio, r.LatencyRatio, r.RPSRatio = tr, in, lat, rps
		return r
	}
	tests := []struct {
		name      string
		samples   []record.Sample
		rates     map[string][]float64
		modes     []string
		reference string
		want      []analysis.ModeRow
	}{
		{
			name: "reference bare", samples: samples(), rates: rates,
			modes: []string{"bare", "overlay"}, reference: "bare",
			// Like sizes only: the two share size 1000 (0.5 against 1 MB/s,
			// 2 against 1 ms, siege 4 against 2 ms); the pooled medians
			// (1 against 2 MB/s, siege 5 against 3 ms) mix other sizes.
			want: []analysis.ModeRow{withRatios(bare, 1, 1, 1, 1), withRatios(overlay, 0.5, 2, 2, 0.5)},
		},
		{
			name: "reference overlay, order of modes kept", samples: samples(), rates: rates,
			modes: []string{"overlay", "bare"}, reference: "overlay",
			want: []analysis.ModeRow{withRatios(overlay, 1, 1, 1, 1), withRatios(bare, 2, 0.5, 0.5, 2)},
		},
		{
			name: "reference absent", samples: samples(), rates: rates,
			modes: []string{"bare", "overlay"}, reference: "macvlan",
			want: []analysis.ModeRow{withRatios(bare, nan(), nan(), nan(), nan()), withRatios(overlay, nan(), nan(), nan(), nan())},
		},
		{
			name: "no reference", samples: samples(), rates: rates,
			modes: []string{"bare", "overlay"}, reference: "",
			want: []analysis.ModeRow{withRatios(bare, nan(), nan(), nan(), nan()), withRatios(overlay, nan(), nan(), nan(), nan())},
		},
		{
			name: "mode without samples", samples: samples(), rates: rates,
			modes: []string{"bare", "bridge", "host"}, reference: "bare",
			want: []analysis.ModeRow{withRatios(bare, 1, 1, 1, 1), withRatios(empty, nan(), nan(), nan(), nan()),
				withRatios(hostRow, nan(), nan(), nan(), 1.0/100)}, // its one cell, chunk 0, against bare's chunk 0
		},
		{
			name: "reference without samples", samples: samples(), rates: rates,
			modes: []string{"bridge", "bare"}, reference: "bridge",
			want: []analysis.ModeRow{withRatios(empty, nan(), nan(), nan(), nan()), withRatios(bare, nan(), nan(), nan(), nan())},
		},
		{
			name: "no samples at all", samples: nil, rates: nil,
			modes: []string{"bridge"}, reference: "bridge",
			want: []analysis.ModeRow{withRatios(empty, nan(), nan(), nan(), nan())},
		},
		{
			name: "no modes", samples: samples(), rates: rates, modes: nil, reference: "bare", want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkRows(t, analysis.NewPingPongSet(tc.samples, cellRates(tc.rates), tc.modes).Rows(tc.reference), tc.want)
		})
	}
}

func TestPingPongDoesNotReorderInput(t *testing.T) {
	in := samples()
	r := []analysis.CellRate{{Mode: "bare", Rate: 300}, {Mode: "bare", Chunk: 1, Rate: 100}, {Mode: "bare", Chunk: 2, Rate: 200}}
	analysis.NewPingPongSet(in, r, []string{"bare", "overlay"}).Rows("bare")
	if in[0].DurationMS != 1 || in[1].Mode != "overlay" {
		t.Error("PingPong changed its samples")
	}
	if r[0].Rate != 300 || r[1].Rate != 100 || r[2].Rate != 200 {
		t.Errorf("PingPong reordered the cell rates: %v", r)
	}
}

func TestWriteTable(t *testing.T) {
	rows := analysis.NewPingPongSet(samples(), cellRates(rates), []string{"bare", "overlay", "bridge"}).Rows("bare")
	var buf bytes.Buffer
	if err := report.WritePingPongTable(&buf, rows, "bare"); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"mode     samples  failed  transfer MB/s  xbare  ping->pong ms  xbare  siege ms  xbare  req/s  xbare\n" +
		"bare           3       1            2.0   1.00          1.000   1.00     3.000   1.00    200   1.00\n" +
		"overlay        2       3            1.0   0.50          2.000   2.00     5.000   2.00    100   0.50\n" + // siege 4 against 2 at size 1000
		"bridge         0       0              -      -              -      -         -      -      -      -\n"
	if got := buf.String(); got != want {
		t.Errorf("WriteTable:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteTableNoReference(t *testing.T) {
	rows := analysis.NewPingPongSet(samples(), cellRates(rates), []string{"bare"}).Rows("")
	var buf bytes.Buffer
	if err := report.WritePingPongTable(&buf, rows, ""); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), buf.String())
	}
	if want := []string{"mode", "samples", "failed", "transfer", "MB/s", "ratio", "ping->pong", "ms", "ratio", "siege", "ms", "ratio", "req/s", "ratio"}; strings.Join(strings.Fields(lines[0]), " ") != strings.Join(want, " ") {
		t.Errorf("header = %q", lines[0])
	}
	if got, want := strings.Fields(lines[1]), []string{"bare", "3", "1", "2.0", "-", "1.000", "-", "3.000", "-", "200", "-"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("row = %q, want fields %v", lines[1], want)
	}
}

func TestWriteTableEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WritePingPongTable(&buf, nil, "bare"); err != nil {
		t.Fatal(err)
	}
	want := "mode  samples  failed  transfer MB/s  xbare  ping->pong ms  xbare  siege ms  xbare  req/s  xbare\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// TestWriteTableSmallValues: figures below the table's decimals keep two
// significant digits (an imported ab run's 0.023 MB/s printed as 0.0).
func TestWriteTableSmallValues(t *testing.T) {
	tests := []struct {
		name    string
		samples []record.Sample
		want    []string // the overlay row's fields
	}{
		// 100 B in 4.4 ms: 0.023 MB/s; the reference's 100 B in 4.0 ms: 0.025.
		{"tiny transfer rate", []record.Sample{ok("bare", 100, 4, 5), ok("overlay", 100, 4.4, 5)},
			[]string{"overlay", "1", "0", "0.023", "0.91", "4.400", "1.10", "5.000", "1.00", "-", "-"}},
		// 0.00042 ms and a ratio of 0.0042: digits, not 0.000 and 0.00.
		{"tiny latency and ratio", []record.Sample{ok("bare", 1000, 0.1, 1), ok("overlay", 1000, 0.00042, 1)},
			[]string{"overlay", "1", "0", "2381.0", "238.10", "0.00042", "0.0042", "1.000", "1.00", "-", "-"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := report.WritePingPongTable(&buf, analysis.NewPingPongSet(tc.samples, nil, []string{"bare", "overlay"}).Rows("bare"), "bare"); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if got := strings.Fields(lines[len(lines)-1]); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("row %v, want %v\n%s", got, tc.want, buf.String())
			}
		})
	}
}
