package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

func TestWriteInstanceTable(t *testing.T) {
	var b strings.Builder
	if err := WriteInstanceTable(&b, []analysis.InstanceRow{{Mode: "bridge", Ratios: []float64{0.8, 0.6667, math.NaN()}, Spread: 0.2}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"instance 2", "bridge", "0.800", "0.667", "20.0 %"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteInstanceTable(&b, nil); err != nil || b.Len() != 0 {
		t.Errorf("one instance printed %q", b.String())
	}
}

func TestWriteSocketTables(t *testing.T) {
	total := func(mode string, cell int, mbps float64, retrans int) record.Record {
		data, err := json.Marshal(map[string]any{"workload": "stream", "protocol": "tcp", "duration_s": 10,
			"receiver_bits_per_second": mbps * 1e6, "receiver_bytes": 1e9, "retransmits": retrans})
		if err != nil {
			t.Fatal(err)
		}
		return record.Record{Workload: "stream", Kind: record.KindTotal, Mode: mode, Cell: cell, Case: "stream", Data: data}
	}
	// Retransmits near zero on the reference: a count, shown with its
	// difference (13 → 9388: +9375), never as "+72115.4%".
	recs := []record.Record{total("bare", 0, 1000, 12), total("overlay", 1, 600, 9000), total("bare", 2, 800, 14), total("overlay", 3, 800, 9776)}
	obs := analysis.Observations(recs, nil, nil, nil, func(m string) string { return m })
	cases := analysis.Cases(obs, []string{"bare", "overlay"}, "bare", 2)
	var buf bytes.Buffer
	if err := WriteCaseTables(&buf, cases, "bare"); err != nil {
		t.Fatal(err)
	}
	// bare: 1000, 800 → mean 900, SD 141.42; overlay: 600, 800 → 700.
	for _, want := range []string{"stream (2 repetition(s); mean ± SD, % against bare; counts: difference)", "900 ±141", "700 ±141 (-22.2%)",
		"13.0 ±1.41", "9388 ±549 (+9375)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "7211") {
		t.Errorf("the count's change is a percentage:\n%s", buf.String())
	}
}

// TestWriteFailedSizes: one line per mode with sizes whose every request
// failed, the first five named; nothing for a mode without.
func TestWriteFailedSizes(t *testing.T) {
	tests := []struct {
		name string
		rows []analysis.ModeRow
		want string
	}{
		{"none", []analysis.ModeRow{{Mode: "bare"}}, ""},
		{"one", []analysis.ModeRow{{Mode: "bare"}, {Mode: "overlay", FailedSizes: []int{900}}},
			"overlay: every request failed for 1 message size (900): missing from its curves and ratios\n"},
		{"many", []analysis.ModeRow{{Mode: "bridge", FailedSizes: []int{1, 2, 3, 4, 5, 6, 7}}},
			"bridge: every request failed for 7 message sizes (1, 2, 3, 4, 5, ...): missing from its curves and ratios\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteFailedSizes(&b, tc.rows); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
}
