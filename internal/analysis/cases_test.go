package analysis

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/cost"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

func rec(t *testing.T, mode string, cell, rep int, kase, work, kind string, data any) record.Record {
	t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return record.Record{Workload: work, Kind: kind, Mode: mode, Cell: cell, Case: kase, Rep: rep, Data: b}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSocketCases(t *testing.T) {
	streamTotal := func(mbps float64, bytes int64) map[string]any {
		return map[string]any{"workload": "stream", "protocol": "tcp", "duration_s": 10, "receiver_bits_per_second": mbps * 1e6,
			"receiver_bytes": bytes, "retransmits": 2}
	}
	recs := []record.Record{
		rec(t, "bare", 0, 0, "stream", "stream", "interval", map[string]any{"workload": "stream", "bytes": 1}),
		rec(t, "bare", 0, 0, "stream", "stream", "total", streamTotal(1000, 1e9)),
		rec(t, "overlay", 1, 0, "stream", "stream", "total", streamTotal(600, 1e9)),
		rec(t, "bare", 2, 1, "stream", "stream", "total", streamTotal(800, 1e9)),
		rec(t, "overlay", 3, 1, "stream", "stream", "total", streamTotal(800, 1e9)),
		rec(t, "overlay", 4, 0, "rr udp", "rr", "total", map[string]any{"workload": "rr", "type": "result", "rr_mode": "udp",
			"trans_per_s": 1000, "transactions": 100, "request_size": 10, "response_size": 10, "lost": 3,
			"round_trip_us": map[string]any{"p50": 40, "p99": 90}, "one_way_us_half_rtt": map[string]any{"p50": 20}}),
	}
	use := func(cpu float64) process.Usage {
		return process.Usage{Source: "proc", CPUSeconds: cpu, MemoryPeak: 2e6}
	}
	costs := []record.Cost{
		{Workload: "cost", Cell: 0, Client: use(1), Server: use(1)},
		{Workload: "cost", Cell: 1, Client: use(2), Server: use(2)},
		{Workload: "cost", Cell: 7, Client: use(9), Server: use(9)}, // no such cell: ignored
	}
	t0 := time.Unix(1000, 0)
	cpu := []cost.CPUSample{
		{Time: t0.Add(1 * time.Second), All: 50, Cores: []float64{80, 20}},
		{Time: t0.Add(2 * time.Second), All: 70, Cores: []float64{40, 100}},
		{Time: t0.Add(5 * time.Second), All: 10, Cores: []float64{10, 10}}, // after the cell
	}
	cells := map[int]Cell{0: {Start: t0, End: t0.Add(2 * time.Second)}}
	obs := Observations(recs, costs, cpu, cells, func(m string) string { return m })
	if len(obs) != 5 {
		t.Fatalf("%d observations, want 5 (one per total)", len(obs))
	}
	o := obs[0]
	if o.Values["throughput"] != 1000 || o.Values["cpu_per_gb"] != 2 || o.Values["client_rss"] != 2 || o.Values["client_mem"] != 0 ||
		o.Values["machine_cpu"] != 60 || o.Values["busiest_core"] != 90 {
		t.Errorf("first observation: %+v", o.Values)
	}
	if _, ok := obs[2].Values["machine_cpu"]; ok {
		t.Errorf("a cell without a window got machine CPU: %+v", obs[2].Values)
	}

	cases := Cases(obs, []string{"bare", "overlay"}, "bare", 2)
	if len(cases) != 2 || cases[0].Label != "stream" || cases[1].Label != "rr udp" || cases[0].Protocol != "tcp" || cases[1].Protocol != "udp" {
		t.Fatalf("cases: %+v", cases)
	}
	st := cases[0]
	bare, ov := st.Rows[0].Stats["throughput"], st.Rows[1].Stats["throughput"]
	// bare: 1000, 800 → mean 900, SD 141.42; overlay: 600, 800 → 700, 141.42.
	if bare.N != 2 || bare.Mean.Value != 900 || !near(bare.SD.Value, 100*math.Sqrt2) || bare.Mean.Class != "ref" {
		t.Errorf("bare throughput: %+v", bare)
	}
	if ov.Mean.Value != 700 || !near(ov.Mean.Percent, -200.0/9) || ov.Mean.Class != "worse" || ov.Min.Value != 600 || ov.Max.Value != 800 {
		t.Errorf("overlay throughput: %+v", ov)
	}
	if ov.SD.Class != "same" {
		t.Errorf("equal SDs should be the same: %+v", ov.SD)
	}
	// rr runs only on overlay: no reference, no changes; RTT/2 carried.
	rr := cases[1]
	if len(rr.Rows) != 1 || rr.Rows[0].Series != "overlay" {
		t.Fatalf("rr rows: %+v", rr.Rows)
	}
	if s := rr.Rows[0].Stats["one_way_p50"]; s.Mean.Value != 20 || !math.IsNaN(s.Mean.Percent) || s.Mean.Class != "" {
		t.Errorf("rr one-way: %+v", s)
	}
	if s := rr.Rows[0].Stats["rr_lost"]; s.Mean.Value != 3 {
		t.Errorf("rr lost: %+v", s)
	}
	for _, m := range st.Metrics {
		if m.Key == "trans_per_s" || m.Key == "loss" {
			t.Errorf("stream tcp case lists metric %s", m.Key)
		}
	}

}

func TestTotalValues(t *testing.T) {
	tests := []struct {
		work, data string
		want       map[string]float64
	}{
		{"stream", `{"protocol":"udp","receiver_bits_per_second":5e8,"loss_percent":1.5,"out_of_order":3}`,
			map[string]float64{"throughput": 500, "loss": 1.5, "out_of_order": 3}},
		{"jitter", `{"jitter_ms":0.2,"loss_pct":0.1,"out_of_order":1,"bps":1e7}`,
			map[string]float64{"jitter": 0.2, "loss": 0.1, "out_of_order": 1, "throughput": 10}},
		{"datagram", `{"mb_per_s":11.5,"packets_per_s":8000,"success_rate":0.98,"out_of_order":4,"avg_offset":1.5}`,
			map[string]float64{"mb_per_s": 11.5, "packets_per_s": 8000, "success": 98, "out_of_order": 4, "avg_offset": 1.5}},
		// The envelope a client prints now reads as the bare record did.
		{"datagram", `{"workload":"datagram","kind":"end","mb_per_s":11.5,"packets_per_s":8000,"success_rate":0.98,"out_of_order":4,"avg_offset":1.5}`,
			map[string]float64{"mb_per_s": 11.5, "packets_per_s": 8000, "success": 98, "out_of_order": 4, "avg_offset": 1.5}},
	}
	totalValues := func(work string, data json.RawMessage) map[string]float64 {
		w, ok := registry.Lookup(work)
		if !ok {
			return nil
		}
		tot, err := w.Total(data)
		if err != nil {
			return nil
		}
		return tot.Values
	}
	for _, tc := range tests {
		got := totalValues(tc.work, json.RawMessage(tc.data))
		for k, v := range tc.want {
			if !near(got[k], v) {
				t.Errorf("%s %s = %v, want %v", tc.work, k, got[k], v)
			}
		}
	}
	if totalValues("stream", json.RawMessage(`[1,2]`)) != nil || totalValues("nosuch", json.RawMessage(`{}`)) != nil {
		t.Error("undecodable or unknown totals should give nil")
	}
}
