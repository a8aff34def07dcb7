package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
)

// underLoadRun is a bare run of an rr probe idle (under_load 0, p50 50 µs)
// and beside four streams (p50 5 ms), two repetitions each.
func underLoadRun(load bool) Run {
	s := spec.Default()
	s.Name, s.Modes = "rrul", []string{"bare"}
	s.Tests = []workload.Test{{Workload: "rr", Sweep: &workload.Sweep{Param: "under_load", Values: []string{"0", "4"}}}}
	run := Run{Dir: "rrul", Label: "rrul", Meta: record.Meta{Status: "complete", Spec: s, Started: time.Unix(0, 0)}}
	cell := 0
	for rep := range 2 {
		for _, v := range []string{"0", "4"} {
			p50 := 50.0 + float64(rep)
			if v == "4" {
				p50 = 5000 + 100*float64(rep)
			}
			base := record.Record{Workload: "rr", Mode: "bare", Cell: cell, Case: "rr under_load=" + v, Param: "under_load", Value: v, Rep: rep}
			add := func(kind, w, data string) {
				r := base
				r.Kind, r.Workload, r.Data = kind, w, []byte(data)
				run.Records = append(run.Records, r)
			}
			for i := range 3 {
				add("interval", "rr", fmt.Sprintf(`{"workload":"rr","kind":"interval","end_s":%d,"round_trip_p50_us":%g,"round_trip_p99_us":%g}`, i+1, p50, 2*p50))
				if v == "4" && load {
					add(record.KindLoad, "stream", fmt.Sprintf(`{"workload":"stream","kind":"interval","stream":-1,"end":%d,"bits_per_second":9e7,"side":"receiver"}`, i+1))
				}
			}
			if v == "4" && load {
				add(record.KindLoad, "stream", `{"workload":"stream","kind":"end","receiver_bits_per_second":9.5e7}`)
			}
			add(record.KindTotal, "rr", fmt.Sprintf(`{"workload":"rr","kind":"end","rr_mode":"tcp","transactions":10,"trans_per_s":5,"round_trip_us":{"p50":%g,"p99":%g}}`, p50, 2*p50))
			cell++
		}
	}
	return run
}

// TestUnderLoadSection: a run whose probe ran beside a load gets the
// latency-under-load table (idle and loaded percentiles, inflation with
// its interval, the load's throughput) and the two panels per loaded
// case; without load records, neither.
func TestUnderLoadSection(t *testing.T) {
	r, err := Build([]Run{underLoadRun(true)}, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var tab *Table
	for i := range r.Tables {
		if r.Tables[i].ID == "tab-underload" {
			tab = &r.Tables[i]
		}
	}
	if tab == nil || len(tab.Rows) != 1 {
		t.Fatalf("no latency-under-load table with one row: %+v", tab)
	}
	row := cellTexts(tab.Rows)[0]
	for _, want := range []string{"bare/", "rr under_load=4/", "50.5/", "5050.0/", "95.0/", "2/2/", "× ["} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	figs := map[string]bool{}
	for _, f := range r.Figures {
		figs[f.ID] = true
	}
	if !figs["fig-underload-0-latency"] || !figs["fig-underload-0-load"] {
		t.Errorf("figures %v lack the two panels", figs)
	}

	r, err = Build([]Run{underLoadRun(false)}, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range r.Tables {
		if strings.HasPrefix(tb.ID, "tab-underload") {
			t.Errorf("a run without load has table %s", tb.ID)
		}
	}
	for _, f := range r.Figures {
		if strings.HasPrefix(f.ID, "fig-underload") {
			t.Errorf("a run without load has figure %s", f.ID)
		}
	}
}
