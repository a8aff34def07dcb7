package analysis

import (
	"math"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

func TestInstanceSpread(t *testing.T) {
	// Two instances; chunk c on instance c%2. Mode "b" runs at 0.8 of the
	// reference on instance 0 and 0.6 on instance 1; chunks carry different
	// sizes (and so rates) but each ratio pairs one chunk's sizes.
	cells := map[int]CellUnit{}
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
			cells[cell] = CellUnit{Chunk: chunk, Instance: chunk % 2}
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
	rows := InstanceSpread(samples, cells, []string{"a", "b"}, "a", 2)
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
	if InstanceSpread(samples, cells, []string{"a", "b"}, "a", 1) != nil {
		t.Error("one instance has no spread to show")
	}
}
