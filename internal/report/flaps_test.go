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
		run.Sockets.Records = append(run.Sockets.Records, record.Record{Workload: "stream", Kind: kind, Mode: "bare", Case: "tcp", Data: []byte(data)})
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
			if err := WriteFlapTable(&text, analysis.Flaps(run.Meta, run.Sockets.Records, func(m string) string { return m })); err != nil {
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
