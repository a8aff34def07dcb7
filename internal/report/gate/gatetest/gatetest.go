// Package gatetest writes small synthetic runs for the tests of gate
// and of `cnperf check`: no lab needed.
package gatetest

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
)

// WriteRun writes a ping-pong run of bare and bridge: chunks units spread
// over instances, bridge at factor(instance) of bare's speed with 1 %
// noise per cell. It returns the run's directory.
func WriteRun(t *testing.T, chunks, instances int, factor func(instance int) float64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := record.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := spec.Default()
	s.Name, s.Modes, s.Reference, s.Instances = "synthetic", []string{"bare", "bridge"}, "bare", instances
	meta := record.Meta{Format: 1, Status: "complete", Spec: s, ReceiveWindow: 131072}
	for i := range instances {
		for _, m := range s.Modes {
			meta.Modes = append(meta.Modes, record.ModeMeta{Mode: m, Instance: i})
		}
	}
	rng := rand.New(rand.NewPCG(uint64(chunks), uint64(instances)))
	t0 := time.Unix(1e9, 0)
	for chunk := range chunks {
		inst := chunk % instances
		for _, m := range s.Modes {
			cell := record.Cell{Index: len(meta.Cells), Mode: m, Instance: inst, Chunk: chunk, Start: t0, End: t0.Add(time.Second), Samples: 6}
			f := 1.0
			if m == "bridge" {
				f = factor(inst)
			}
			f *= math.Exp(rng.NormFloat64() * 0.01)
			cell.End = t0.Add(time.Duration(float64(time.Second) / f))
			for k, size := range []int{100 * (chunk + 1), 1000 * (chunk + 1)} {
				for rep := range 3 {
					ms := (0.2 + float64(size)/1e5) / f
					s := record.Sample{Workload: "pingpong", Mode: m, Cell: cell.Index, Size: size, Rep: rep + 3*k, Length: size, Code: 200,
						DurationMS: ms, LatencyMS: ms + 0.3}
					if err := w.Append(s); err != nil {
						t.Fatal(err)
					}
				}
			}
			meta.Cells = append(meta.Cells, cell)
			t0 = t0.Add(2 * time.Second)
		}
	}
	if err := w.WriteMeta(meta); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}
