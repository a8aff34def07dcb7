package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

// flapRun is a synthetic run of one cell: a stream whose receiver moved
// nothing from 2.0 s to 3.2 s of 0.2 s intervals and then half its rate
// for one interval, and an rr client whose transactions stopped as long,
// with a latency spike as they resumed, its link flapped from 2.0 s to
// 3.0 s.
func flapRun(t *testing.T, flaps []record.Flap) (record.Meta, []record.Record) {
	t.Helper()
	meta := record.Meta{Cells: []record.Cell{{Index: 0, Mode: "bare", Flaps: flaps}, {Index: 1, Mode: "bare"}}}
	var recs []record.Record
	add := func(cell int, workload, kind string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, record.Record{Workload: workload, Kind: kind, Mode: "bare", Cell: cell, Case: "c", Data: b})
	}
	for cell := range 2 {
		for i := range 30 {
			start, end := float64(i)*0.2, float64(i+1)*0.2
			bytes, trans, p99 := 1e8, 1000.0, 50.0
			switch {
			case start >= 2.0 && end <= 3.2+1e-9:
				bytes, trans = 0, 0
			case math.Abs(start-3.2) < 1e-9:
				bytes, trans, p99 = 5e7, 500, 1.4e6 // the one that waited
			}
			for _, side := range []string{"sender", "receiver"} {
				add(cell, "stream", "interval", map[string]any{"stream": -1, "side": side, "start": start, "end": end, "bytes": bytes, "retransmits": map[bool]int{true: 3}[side == "sender" && start >= 2.0 && start < 3.4]})
			}
			add(cell, "stream", "interval", map[string]any{"stream": 0, "side": "sender", "start": start, "end": end, "bytes": 1, "retransmits": 100})
			add(cell, "rr", "interval", map[string]any{"type": "interval", "start_s": start, "end_s": end, "transactions": trans, "round_trip_p99_us": p99})
		}
		add(cell, "rr", record.KindTotal, map[string]any{"tcp_info": map[string]any{"retransmits": 4}, "round_trip_us": map[string]any{"max": 1.6e6}})
	}
	return meta, recs
}

func TestFlapsSyntheticStall(t *testing.T) {
	meta, recs := flapRun(t, []record.Flap{{Link: "server", At: 2, Down: 2.0, Up: 3.0}})
	got := Flaps(meta, recs, func(m string) string { return m })
	if len(got) != 2 {
		t.Fatalf("%d effects, want one for the stream and one for rr of the flapped cell: %+v", len(got), got)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	for _, e := range got {
		t.Run(e.Workload, func(t *testing.T) {
			if e.Cell != 0 || e.Link != "server" || e.Series != "bare" {
				t.Errorf("effect %+v: want cell 0, link server, series bare", e)
			}
			if !near(e.Stall, 1.2) || e.StallIntervals != 6 {
				t.Errorf("stall %.3f s over %d intervals, want 1.2 s over 6", e.Stall, e.StallIntervals)
			}
			// 3.2–3.4 moved half; 3.4–3.6 is the first at the full rate.
			if !near(e.Recover, 0.6) {
				t.Errorf("recovered %.3f s after up, want 0.6", e.Recover)
			}
			switch e.Workload {
			case "stream":
				if !near(e.PreRate, 5e8) || e.Retransmits != 21 || !math.IsNaN(e.Worst) {
					t.Errorf("stream: pre-flap rate %g, retransmits %d, worst %g; want 5e8 B/s, 21 (7 sender intervals of 3), NaN", e.PreRate, e.Retransmits, e.Worst)
				}
			case "rr":
				if !near(e.PreRate, 5000) || e.Retransmits != 4 || e.Worst != 1.6e6 {
					t.Errorf("rr: pre-flap rate %g, retransmits %d, worst round trip %g; want 5000/s, 4, 1.6e6 µs (the total's max over the window's p99 of 1.4e6)", e.PreRate, e.Retransmits, e.Worst)
				}
			}
		})
	}
}

func TestFlapsNone(t *testing.T) {
	for _, flaps := range [][]record.Flap{nil, {{Link: "server", At: 2, Error: "set server down: no such device"}}} {
		t.Run(fmt.Sprint(len(flaps)), func(t *testing.T) {
			meta, recs := flapRun(t, flaps)
			if got := Flaps(meta, recs, func(m string) string { return m }); len(got) != 0 {
				t.Errorf("Flaps = %+v, want none for a run without a flap that went down", got)
			}
		})
	}
}
