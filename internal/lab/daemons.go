package lab

import (
	"math"
	"slices"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// DaemonMeter reads the node daemons of one lab.
type DaemonMeter interface {
	Read() (DaemonSnapshot, error)
}

// DaemonSnapshot is one reading of a lab's node daemons, by role
// (record.DaemonCNIAgent, ...).
type DaemonSnapshot struct {
	Time    time.Time
	Source  string // "cgroup" or "metrics.k8s.io"
	Daemons map[string]DaemonReading
}

// DaemonReading is one role's daemons, summed over the nodes read.
// Cumulative is true when CPUSeconds is a counter since the daemons
// started (cgroups); otherwise CPURate is their CPU in cores over Window
// (a metrics API's rate).
type DaemonReading struct {
	Names       []string
	Nodes       int
	Cumulative  bool
	CPUSeconds  float64
	CPURate     float64
	Window      time.Duration
	MemoryBytes int64
}

// DaemonCosts is what each role spent between two readings taken around a
// cell that ran from start to end: a counter's difference (its share of a
// core over the readings' span), or a rate times the cell's duration. A role missing from either reading, or whose
// counter went back (a daemon restarted), is left out; nil when nothing is
// left.
func DaemonCosts(before, after DaemonSnapshot, start, end time.Time) map[string]record.DaemonCost {
	wall := end.Sub(start).Seconds()
	if !(wall > 0) {
		return nil
	}
	out := map[string]record.DaemonCost{}
	for role, a := range after.Daemons {
		b, ok := before.Daemons[role]
		if !ok || a.Nodes != b.Nodes {
			continue
		}
		c := record.DaemonCost{Names: slices.Clone(a.Names), Nodes: a.Nodes, Source: after.Source, MemoryBytes: a.MemoryBytes}
		span := wall
		if a.Cumulative {
			if !b.Cumulative || a.CPUSeconds < b.CPUSeconds {
				continue
			}
			c.CPUSeconds = a.CPUSeconds - b.CPUSeconds
			// The counters' difference spans the readings, which bracket
			// the cell a little wider than its timed part.
			if s := after.Time.Sub(before.Time).Seconds(); s >= wall {
				span = s
			}
		} else {
			c.CPUSeconds = a.CPURate * wall
			c.WindowSeconds = a.Window.Seconds()
		}
		if math.IsNaN(c.CPUSeconds) || math.IsInf(c.CPUSeconds, 0) || c.CPUSeconds < 0 {
			continue
		}
		// To the counters' nanosecond, so that a cell's record stays short
		// (run.json holds every cell, and is rewritten after each).
		c.CPUPercent = math.Round(1e6*100*c.CPUSeconds/span) / 1e6
		c.CPUSeconds = math.Round(c.CPUSeconds*1e9) / 1e9
		out[role] = c
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
