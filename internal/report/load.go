// Package report turns stored runs into the papers' figures and tables: one
// self-contained HTML file (inline SVG, no network), figures as SVG and PNG
// for papers, and every table as CSV and JSON for scripts.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/cnperf/cnperf/internal/cost"
	"github.com/cnperf/cnperf/internal/pingpong"
	"github.com/cnperf/cnperf/internal/results"
	"github.com/cnperf/cnperf/internal/runner"
)

// Run is one loaded run directory.
type Run struct {
	Dir     string
	Label   string // how the run is named when several are compared
	Meta    runner.Meta
	Samples []pingpong.Sample
	CPU     []cost.CPUSample // the machine's CPU per second while measuring
}

// Load reads run directories. A directory that cannot be read is skipped
// and reported in the returned notes; so are damaged sample lines.
func Load(dirs []string) ([]Run, []string) {
	var runs []Run
	var notes []string
	for _, dir := range dirs {
		rd, err := results.Open(dir)
		if err != nil {
			notes = append(notes, fmt.Sprintf("skipped %s: %v", dir, err))
			continue
		}
		var r Run
		r.Dir = dir
		if err := rd.Meta(&r.Meta); err != nil {
			notes = append(notes, fmt.Sprintf("skipped %s: run.json: %v", dir, err))
			continue
		}
		samples, rep, err := rd.PingPong()
		if err != nil {
			notes = append(notes, fmt.Sprintf("skipped %s: samples: %v", dir, err))
			continue
		}
		for _, p := range rep.Problems {
			notes = append(notes, fmt.Sprintf("%s: %s", dir, p))
		}
		if r.Meta.Status != "complete" && r.Meta.Status != "imported" {
			notes = append(notes, fmt.Sprintf("%s: the run's status is %q: it holds the samples measured before it stopped", dir, r.Meta.Status))
		}
		r.Samples = samples
		cpuTag := []byte(`"workload":"cpu"`)
		_, _ = rd.Samples(func(line []byte) error {
			if bytes.Contains(line, cpuTag) {
				var c cost.CPUSample
				if json.Unmarshal(line, &c) == nil {
					r.CPU = append(r.CPU, c)
				}
			}
			return nil
		})
		r.Label = filepath.Base(filepath.Clean(dir))
		runs = append(runs, r)
	}
	return runs, notes
}
