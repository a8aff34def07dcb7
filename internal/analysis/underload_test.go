package analysis

import (
	"fmt"
	"math"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

// rrRecords are one cell of an rr case: intervals and a total with the
// given median and 99th percentile, and with load the stream's sum
// intervals on both sides and its end.
func rrRecords(cell int, value string, p50, p99 float64, load bool) []record.Record {
	base := record.Record{Workload: "rr", Mode: "bare", Cell: cell, Case: "rr under_load=" + value, Param: UnderLoadParam, Value: value}
	var out []record.Record
	add := func(kind, workload, data string) {
		r := base
		r.Kind, r.Workload, r.Data = kind, workload, []byte(data)
		out = append(out, r)
	}
	for i := range 3 {
		add("interval", "rr", fmt.Sprintf(`{"workload":"rr","kind":"interval","rr_mode":"tcp","end_s":%d,"round_trip_p50_us":%g,"round_trip_p99_us":%g}`, i+1, p50*float64(i+1), p99))
		if load {
			add(record.KindLoad, "stream", fmt.Sprintf(`{"workload":"stream","kind":"interval","stream":-1,"end":%d,"bits_per_second":%g,"side":"sender"}`, i+1, 200e6))
			add(record.KindLoad, "stream", fmt.Sprintf(`{"workload":"stream","kind":"interval","stream":0,"end":%d,"bits_per_second":1,"side":"receiver"}`, i+1))
			add(record.KindLoad, "stream", fmt.Sprintf(`{"workload":"stream","kind":"interval","stream":-1,"end":%d,"bits_per_second":%g,"side":"receiver"}`, i+1, 100e6))
		}
	}
	if load {
		add(record.KindLoad, "stream", `{"workload":"stream","kind":"end","receiver_bits_per_second":95e6}`)
	}
	add(record.KindTotal, "rr", fmt.Sprintf(`{"workload":"rr","kind":"end","rr_mode":"tcp","transactions":10,"trans_per_s":5,"round_trip_us":{"p50":%g,"p99":%g}}`, p50, p99))
	return out
}

// TestUnderLoads: a loaded case is paired with its test's idle case in
// its series; inflation is loaded ÷ idle with an interval from the
// repetitions; the timeline is the probe's intervals beside the load's
// receiver-side sums; a run without load has none.
func TestUnderLoads(t *testing.T) {
	var recs []record.Record
	recs = append(recs, rrRecords(0, "0", 50, 100, false)...)
	recs = append(recs, rrRecords(1, "4", 5000, 9000, true)...)
	recs = append(recs, rrRecords(2, "0", 60, 120, false)...)
	recs = append(recs, rrRecords(3, "4", 6000, 11000, true)...)
	id := func(m string) string { return m }
	if got := UnderLoads(recs[:len(rrRecords(0, "0", 1, 1, false))], id); len(got) != 0 {
		t.Errorf("an idle run has %d probes under load", len(got))
	}
	got := UnderLoads(recs, id)
	if len(got) != 1 {
		t.Fatalf("%d probes under load, want 1", len(got))
	}
	u := got[0]
	if u.Series != "bare" || u.Load != "4" || u.Idle.Reps != 2 || u.Loaded.Reps != 2 {
		t.Errorf("paired %+v", u)
	}
	if u.Idle.P50 != 55 || u.Loaded.P50 != 5500 || u.Loaded.P99 != 10000 {
		t.Errorf("idle p50 %g, loaded p50 %g p99 %g", u.Idle.P50, u.Loaded.P50, u.Loaded.P99)
	}
	want := math.Sqrt(5000*6000) / math.Sqrt(50*60)
	if math.Abs(u.P50.Ratio-want) > 1e-9 || !u.P50.Known() || !(u.P50.Lo < want && want < u.P50.Hi) {
		t.Errorf("p50 inflation %+v, want %g inside a known interval", u.P50, want)
	}
	if u.LoadBits != 95e6 {
		t.Errorf("load %g bits/s, want the receiver's 95e6", u.LoadBits)
	}
	if len(u.Timeline) != 3 || u.Timeline[2].T != 3 || u.Timeline[2].P50 != 16500 || u.Timeline[0].Bits != 100e6 {
		t.Errorf("timeline %+v", u.Timeline)
	}
}

// TestInflationBounds: one repetition a side gives a ratio without an
// interval; none gives nothing; identical repetitions a point interval.
func TestInflationBounds(t *testing.T) {
	if iv := inflation([]float64{4}, []float64{2}); iv.Ratio != 2 || iv.Known() {
		t.Errorf("one each: %+v", iv)
	}
	if iv := inflation(nil, []float64{2}); !math.IsNaN(iv.Ratio) {
		t.Errorf("none loaded: %+v", iv)
	}
	if iv := inflation([]float64{4, 4}, []float64{2, 2}); iv.Lo != 2 || iv.Hi != 2 {
		t.Errorf("no spread: %+v", iv)
	}
}

// FuzzUnderLoads: whatever a stored run's load and rr lines hold, pairing
// them neither panics nor returns a timeline above its bound.
func FuzzUnderLoads(f *testing.F) {
	f.Add([]byte(`{"workload":"stream","kind":"interval","stream":-1,"end":1,"bits_per_second":1e308,"side":"receiver"}`),
		[]byte(`{"workload":"rr","kind":"end","round_trip_us":{"p50":1e308,"p99":-1}}`), "0")
	f.Add([]byte(`{"kind":"end","receiver_bits_per_second":"x"}`), []byte(`{"end_s":"NaN"}`), "4")
	f.Fuzz(func(t *testing.T, load, probe []byte, value string) {
		recs := []record.Record{
			{Workload: "rr", Kind: "interval", Cell: 1, Param: UnderLoadParam, Value: value, Data: probe},
			{Workload: "stream", Kind: record.KindLoad, Cell: 1, Param: UnderLoadParam, Value: value, Data: load},
			{Workload: "rr", Kind: record.KindTotal, Cell: 1, Param: UnderLoadParam, Value: value, Data: probe},
			{Workload: "rr", Kind: record.KindTotal, Cell: 2, Param: UnderLoadParam, Value: "0", Data: probe},
		}
		for _, u := range UnderLoads(recs, func(m string) string { return m }) {
			if len(u.Timeline) > MaxLoadPoints {
				t.Fatalf("timeline of %d points", len(u.Timeline))
			}
		}
	})
}
