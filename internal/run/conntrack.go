package run

import (
	"maps"
	"time"

	"github.com/cnperf/cnperf/internal/lab/conntrack"
	"github.com/cnperf/cnperf/internal/record"
)

// conntrackEvery is how often a cell's conntrack tables are read: the
// peak of a table its connections fill and then leave.
const conntrackEvery = 500 * time.Millisecond

// watchConntrack reads the lab's conntrack tables before a cell of a
// workload that fills them (on) and every conntrackEvery until the
// returned function is called at the cell's end, which returns what they
// held (nil when off or unreadable).
func watchConntrack(e *env, on bool) func() *record.CellConntrack {
	none := func() *record.CellConntrack { return nil }
	if !on || e.lab == nil || e.lab.Runtime == nil {
		return none
	}
	rt := e.lab.Runtime
	before, err := rt.Conntrack()
	if err != nil || before == nil {
		return none
	}
	peak := map[string]int64{}
	last := maps.Clone(before)
	note := func(now map[string]conntrack.Reading) {
		for ns, r := range now {
			peak[ns] = max(peak[ns], r.Entries)
			last[ns] = r
		}
	}
	note(before)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(conntrackEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if now, err := rt.Conntrack(); err == nil {
					note(now)
				}
			}
		}
	}()
	return func() *record.CellConntrack {
		close(stop)
		<-done
		if now, err := rt.Conntrack(); err == nil {
			note(now)
		}
		c := &record.CellConntrack{Max: conntrack.Max(), ObjectBytes: conntrack.ObjectSize(), Namespaces: map[string]record.ConntrackNS{}}
		for ns, r := range last {
			d := r.Stat.Sub(before[ns].Stat)
			c.Namespaces[ns] = record.ConntrackNS{Before: before[ns].Entries, Peak: peak[ns],
				Drop: d.Drop, EarlyDrop: d.EarlyDrop, InsertFailed: d.InsertFailed}
		}
		return c
	}
}
