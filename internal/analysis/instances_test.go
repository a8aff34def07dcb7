package analysis

import (
	"math"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

func TestInstancesOfASweep(t *testing.T) {
	// Two instances; chunk c on instance c%2. Mode "b" runs at 0.8 of the
	// reference on instance 0 and 0.6 on instance 1; chunks carry different
	// sizes (and so rates) but each ratio pairs one chunk's sizes.
	cells := map[int]Cell{}
	var samples []record.Sample
	cell := 0
	for chunk := 0; chunk < 6; chunk++ {
		size := 1000 * (chunk + 1)
		refMS := float64(chunk+1) * 0.1 // reference rate 10 MB/s for every chunk
		factor := 0.8
		if chunk%2 == 1 {
			factor = 0.6
		}
		for _, m := range []string{"a", "b"} {
			cells[cell] = Cell{Chunk: chunk, Instance: chunk % 2}
			ms := refMS
			if m == "b" {
				ms = refMS / factor
			}
			for rep := 0; rep < 3; rep++ {
				samples = append(samples, record.Sample{Mode: m, Cell: cell, Size: size, Length: size, Code: 200, DurationMS: ms})
			}
			cell++
		}
	}
	sweep := NewSweep(samples, cells, []string{"a", "b"}).Case(pingpong.Descriptor)
	rows := Instances(sweep, "a", "transfer", 2)
	if len(rows) != 1 || rows[0].Mode != "b" {
		t.Fatalf("rows = %+v", rows)
	}
	r := rows[0]
	if math.Abs(r.Ratios[0]-0.8) > 1e-9 || math.Abs(r.Ratios[1]-0.6) > 1e-9 {
		t.Errorf("ratios = %v, want [0.8 0.6]", r.Ratios)
	}
	if math.Abs(r.Spread-(0.8/0.6-1)) > 1e-9 {
		t.Errorf("spread = %v, want %v", r.Spread, 0.8/0.6-1)
	}
	if Instances(sweep, "a", "transfer", 1) != nil {
		t.Error("one instance has no spread to show")
	}
}

// A case measured over repetitions spreads over its instances the same way:
// each repetition's figure over the reference's of the same unit.
func TestInstancesOfRepetitions(t *testing.T) {
	var obs []Observation
	for rep := range 6 {
		for _, m := range []struct {
			s string
			v float64
		}{{"bare", 1000}, {"overlay", []float64{900, 500}[rep%2]}} {
			obs = append(obs, Observation{Series: m.s, Case: "stream", Work: "stream", Unit: rep, Instance: rep % 2, Values: map[string]float64{"throughput": m.v}})
		}
	}
	rows := Instances(Cases(obs, []string{"bare", "overlay"}, "bare", 2)[0], "bare", "throughput", 2)
	if len(rows) != 1 || rows[0].Mode != "overlay" || !near(rows[0].Ratios[0], 0.9) || !near(rows[0].Ratios[1], 0.5) || !near(rows[0].Spread, 0.8) {
		t.Errorf("rows = %+v, want overlay at 0.9 and 0.5, spread 80 %%", rows)
	}
}

// InstanceValues gives each instance its own repetitions' figures, in
// the units' order, and nothing for a metric or series the case lacks.
func TestInstanceValues(t *testing.T) {
	var obs []Observation
	for rep := range 5 {
		obs = append(obs, Observation{Series: "overlay", Case: "stream", Work: "stream", Unit: rep, Instance: rep % 2,
			Values: map[string]float64{"throughput": float64(100 * (rep + 1)), "retransmits": math.NaN()}})
	}
	c := Cases(obs, []string{"overlay"}, "", 2)[0]
	got := c.InstanceValues("overlay", "throughput")
	if len(got) != 2 || len(got[0]) != 3 || got[0][0] != 100 || got[0][1] != 300 || got[0][2] != 500 || len(got[1]) != 2 || got[1][0] != 200 || got[1][1] != 400 {
		t.Errorf("InstanceValues = %v, want instance 0 [100 300 500], 1 [200 400]", got)
	}
	if got := c.InstanceValues("overlay", "retransmits"); len(got) != 0 {
		t.Errorf("a NaN figure gave %v", got)
	}
	if got := c.InstanceValues("bare", "throughput"); len(got) != 0 {
		t.Errorf("a series the case lacks gave %v", got)
	}
}
