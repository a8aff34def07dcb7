package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
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
	got := Flaps(meta, record.Contents{Records: recs}, func(m string) string { return m })
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
			if got := Flaps(meta, record.Contents{Records: recs}, func(m string) string { return m }); len(got) != 0 {
				t.Errorf("Flaps = %+v, want none for a run without a flap that went down", got)
			}
		})
	}
}

// ppFlapRun is a synthetic ping-pong cell whose clients started at from:
// a request every 50 ms of 5 ms up to 0.95 s, then one held up by the
// flap (0.955 s to 2.2 s, three retries by ping) and one that failed
// (0.96 s to 2.0 s), then requests again from 2.2 s to 3 s; the link was
// down from 1.0 s to 2.0 s.
func ppFlapRun(flaps []record.Flap, until float64) (record.Meta, []record.Sample) {
	from := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s float64) time.Time { return from.Add(time.Duration(s * float64(time.Second))) }
	ok := func(start, ms float64, retries int) record.Sample {
		return record.Sample{Workload: "pingpong", Mode: "bare", Cell: 0, Size: 100, Length: 100, Code: 200, Time: at(start), LatencyMS: ms, Retries: retries}
	}
	var smp []record.Sample
	for i := range 20 {
		if s := float64(i) * 0.05; s < until {
			smp = append(smp, ok(s, 5, 0))
		}
	}
	if until > 1 {
		smp = append(smp, ok(0.955, 1245, 3))
		bad := ok(0.96, 1040, 0)
		bad.Error, bad.Code, bad.Length, bad.Size = "context deadline exceeded", 0, 0, 2000
		smp = append(smp, bad)
		for i := range 16 {
			smp = append(smp, ok(2.2+float64(i)*0.05, 5, 0))
		}
	}
	cell := record.Cell{Index: 0, Mode: "bare", Start: at(0.01), FlapsFrom: from, Flaps: flaps,
		TCP:       &tcpinfo.Stats{Retransmits: 2},
		ServerTCP: map[string]*tcpinfo.Stats{"ping": {Retransmits: 1}, "pong": {Retransmits: 3}}}
	return record.Meta{Cells: []record.Cell{cell, {Index: 1, Mode: "bare"}}}, smp
}

func TestPingPongFlaps(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	flap := record.Flap{Link: "pong", At: 1, Down: 1.0, Up: 2.0}
	meta, smp := ppFlapRun([]record.Flap{flap}, 99)
	got := Flaps(meta, record.Contents{PingPong: smp}, func(m string) string { return "S-" + m })
	if len(got) != 1 {
		t.Fatalf("%d effects, want one: %+v", len(got), got)
	}
	e := got[0]
	if e.Series != "S-bare" || e.Workload != "pingpong" || e.Case != "sizes 100–2000" || e.Link != "pong" || !e.PingPong || e.Error != "" {
		t.Errorf("effect %+v: want series S-bare, pingpong, sizes 100–2000, link pong, no note", e)
	}
	if e.Requests != 2 || e.Lost != 1 || e.Retries != 3 {
		t.Errorf("requests %d, failed %d, retries %d; want the 2 that overlap the flap, 1 failed, 3 retries", e.Requests, e.Lost, e.Retries)
	}
	if !near(e.Worst, 1.245e6) {
		t.Errorf("worst latency %g µs, want 1.245e6", e.Worst)
	}
	if !near(e.Stall, 2.2-0.955) {
		t.Errorf("stall %.3f s, want 1.245 (the success done at 0.955 s to the held-up one's at 2.2 s)", e.Stall)
	}
	if !near(e.Recover, 0.2) {
		t.Errorf("recovered %.3f s after up, want 0.2", e.Recover)
	}
	if e.Retransmits != 6 {
		t.Errorf("retransmits %d, want 6 (siege's 2 and the servers' 1 and 3)", e.Retransmits)
	}
}

// TestPingPongFlapsCellEndedFirst: a cell whose requests all ended before
// the link went down, or whose flap was not done, says so and shows no
// stall; a flap that failed to go down and a run without flaps show none.
func TestPingPongFlapsCellEndedFirst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flaps []record.Flap
		until float64
		rows  int
	}{
		{"requests ended before the down", []record.Flap{{Link: "pong", At: 1, Down: 1.0, Up: 2.0}}, 0.5, 1},
		{"flap not done", []record.Flap{{Link: "pong", At: 5, NotDone: true}}, 99, 1},
		{"could not go down", []record.Flap{{Link: "pong", At: 1, Error: "no such device"}}, 99, 0},
		{"no flaps", nil, 99, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta, smp := ppFlapRun(tc.flaps, tc.until)
			got := Flaps(meta, record.Contents{PingPong: smp}, func(m string) string { return m })
			if len(got) != tc.rows {
				t.Fatalf("%d effects, want %d: %+v", len(got), tc.rows, got)
			}
			for _, e := range got {
				if e.Error != NotBeforeFlap || e.Stall != 0 || !math.IsNaN(e.Recover) || e.Requests != 0 {
					t.Errorf("effect %+v: want the note %q, no stall, no recovery, no request", e, NotBeforeFlap)
				}
			}
		})
	}
}

// TestDisruptionFlaps: a daemon's restart (a spec's disrupt) is analysed
// as a flap of its node, carrying its daemon and when it was ready, and
// its stall is looked for until a few seconds past ready, where a
// datapath reprogrammed by the restarted agent stalls.
func TestDisruptionFlaps(t *testing.T) {
	meta, recs := flapRun(t, []record.Flap{{Link: "node2 server", Component: "flanneld", At: 2, Down: 2.0, Up: 2.1, Ready: 2.5}})
	got := Flaps(meta, record.Contents{Records: recs}, func(m string) string { return m })
	if len(got) != 2 {
		t.Fatalf("%d effects, want the stream's and rr's: %+v", len(got), got)
	}
	for _, e := range got {
		if e.Component != "flanneld" || e.Link != "node2 server" || e.Ready != 2.5 || math.Abs(e.Stall-1.2) > 1e-6 {
			t.Errorf("%s: daemon %q on %q ready %g stall %g; want flanneld on node2 server, ready 2.5, stall 1.2", e.Workload, e.Component, e.Link, e.Ready, e.Stall)
		}
	}
	// One idle second at 8–9 s: within 5 s of the daemon's ready (4 s),
	// not of its restart (1.1 s).
	var moved []span
	for i := range 10 {
		moved = append(moved, span{start: float64(i), end: float64(i + 1), amount: map[bool]float64{true: 0, false: 100}[i == 8], p99: math.NaN()})
	}
	for _, tc := range []struct {
		ready, stall float64
	}{{4, 1}, {0, 0}} {
		e := flapEffect(moved, moved, record.Flap{Link: "node1 client", Component: "cilium-agent", Down: 1, Up: 1.1, Ready: tc.ready})
		if e.Stall != tc.stall {
			t.Errorf("ready at %g: stall %g, want %g", tc.ready, e.Stall, tc.stall)
		}
	}
}
