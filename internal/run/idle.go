package run

import (
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
)

// idleWindow is how long the labs' daemons are watched at rest before the
// first cell: long enough for a few hundred of /proc's 10 ms ticks over a
// daemon's threads to show a busy-polling one (a percent of a core is two
// ticks), short enough to add little to a run. Every lab is watched in the
// same window, so a run waits it once.
const idleWindow = 2 * time.Second

// idleSource is what one lab runs at rest: its own processes (overlay
// routers, Open vSwitch, flanneld, etcd, the delay line) by name, and the
// reader of the cluster's node daemons its pods are on.
type idleSource struct {
	procs   map[string]lab.Proc
	daemons lab.DaemonMeter
}

// idleSources are the labs' sources by envKey, leaving out those with
// nothing to watch. A stress process is the condition's load, not one of
// the mode's daemons: it is left out.
func idleSources(envs map[string]*env) map[string]idleSource {
	out := map[string]idleSource{}
	for k, e := range envs {
		s := idleSource{daemons: e.daemons}
		if e.lab != nil {
			for name, p := range e.lab.Processes() {
				if strings.HasPrefix(name, "stress-") {
					continue
				}
				if s.procs == nil {
					s.procs = map[string]lab.Proc{}
				}
				s.procs[name] = p
			}
		}
		if len(s.procs) > 0 || s.daemons != nil {
			out[k] = s
		}
	}
	return out
}

// idleReading is one reading of a lab's sources.
type idleReading struct {
	procs   map[string]lab.Usage
	daemons *lab.DaemonSnapshot
}

func (s idleSource) read() idleReading {
	r := idleReading{procs: map[string]lab.Usage{}}
	for name, p := range s.procs {
		if u, err := p.Usage(); err == nil {
			r.procs[name] = u
		}
	}
	if s.daemons != nil {
		if d, err := s.daemons.Read(); err == nil {
			r.daemons = &d
		}
	}
	return r
}

// measureIdle reads every lab's sources, waits window (or until ctx ends:
// then nothing is recorded), reads them again and returns each lab's idle
// cost by envKey; labs where nothing could be read twice are left out.
// now is the clock (time.Now; tests step their own).
func measureIdle(ctx context.Context, srcs map[string]idleSource, window time.Duration, now func() time.Time) map[string]*record.IdleCost {
	if len(srcs) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(srcs))
	before := map[string]idleReading{}
	t0 := now()
	for _, k := range keys {
		before[k] = srcs[k].read()
	}
	timer := time.NewTimer(window)
	select {
	case <-ctx.Done():
		timer.Stop()
		return nil
	case <-timer.C:
	}
	t1 := now()
	wall := t1.Sub(t0).Seconds()
	if !(wall > 0) {
		return nil
	}
	out := map[string]*record.IdleCost{}
	for _, k := range keys {
		a, b := before[k], srcs[k].read()
		c := &record.IdleCost{WindowSeconds: math.Round(wall*1e3) / 1e3, Daemons: map[string]record.IdleDaemon{}}
		for name, ub := range b.procs {
			ua, ok := a.procs[name]
			if !ok || ub.CPUSeconds < ua.CPUSeconds || ua.Source != ub.Source {
				continue // restarted, or read differently: no difference to take
			}
			mem := ub.MemoryCurrent
			if mem == 0 {
				mem = ub.MemoryPeak
			}
			c.Daemons[name] = record.IdleDaemon{CPUPercent: math.Round(1e4*100*(ub.CPUSeconds-ua.CPUSeconds)/wall) / 1e4,
				MemoryBytes: mem, Source: ub.Source}
		}
		if a.daemons != nil && b.daemons != nil {
			for role, d := range lab.DaemonCosts(*a.daemons, *b.daemons, t0, t1) {
				c.Daemons[role] = record.IdleDaemon{CPUPercent: math.Round(1e4*d.CPUPercent) / 1e4, MemoryBytes: d.MemoryBytes,
					Source: d.Source, Nodes: d.Nodes}
			}
		}
		if len(c.Daemons) > 0 {
			out[k] = c
		}
	}
	return out
}
