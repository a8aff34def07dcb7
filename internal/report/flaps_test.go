package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
)

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

// TestFlapSection: a run whose link flapped gets the link flaps table,
// in the page and in text, with the stall and the retransmits; a run
// without flaps gets neither.
func TestFlapSection(t *testing.T) {
	for _, flapped := range []bool{true, false} {
		t.Run(fmt.Sprint(flapped), func(t *testing.T) {
			run := flapRun(flapped)
			r, err := Build([]Run{run}, nil, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			var tab *Table
			for i := range r.Tables {
				if r.Tables[i].ID == "tab-flaps" {
					tab = &r.Tables[i]
				}
			}
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
	r, err := Build([]Run{run}, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var tab *Table
	for i := range r.Tables {
		if r.Tables[i].ID == "tab-flaps" {
			tab = &r.Tables[i]
		}
	}
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
