package run

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// usageProc is a lab process whose counters step by each reading.
type usageProc struct {
	lab.Proc
	reads []lab.Usage
	n     *int
}

func (p usageProc) Usage() (lab.Usage, error) {
	u := p.reads[min(*p.n, len(p.reads)-1)]
	*p.n++
	return u, nil
}

// steppingMeter returns its snapshots in turn.
type steppingMeter struct {
	snaps []lab.DaemonSnapshot
	n     *int
}

func (m steppingMeter) Read() (lab.DaemonSnapshot, error) {
	s := m.snaps[min(*m.n, len(m.snaps)-1)]
	*m.n++
	return s, nil
}

// TestMeasureIdle: over a window of 2 s, a router that used 0.1 s of CPU
// ran at 5 % of a core; a node daemon's counter the same way; a process
// that restarted (its counter went back) or was read differently is left
// out; a lab with nothing read twice is left out; a window cut short by
// the run's end records nothing.
func TestMeasureIdle(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	clock := func() func() time.Time {
		n := 0
		return func() time.Time { n++; return t0.Add(time.Duration(n-1) * 2 * time.Second) }
	}
	proc := func(a, b lab.Usage) usageProc { return usageProc{reads: []lab.Usage{a, b}, n: new(int)} }
	router := proc(lab.Usage{Source: "cgroup", CPUSeconds: 1}, lab.Usage{Source: "cgroup", CPUSeconds: 1.1, MemoryCurrent: 5e6})
	restarted := proc(lab.Usage{Source: "proc", CPUSeconds: 3}, lab.Usage{Source: "proc", CPUSeconds: 0.5})
	etcd := proc(lab.Usage{Source: "proc", CPUSeconds: 2}, lab.Usage{Source: "proc", CPUSeconds: 2.02, MemoryPeak: 30e6})
	reading := func(at time.Time, cpu float64) lab.DaemonSnapshot {
		return lab.DaemonSnapshot{Time: at, Source: "cgroup", Daemons: map[string]lab.DaemonReading{
			record.DaemonCNIAgent: {Names: []string{"flanneld"}, Nodes: 2, Cumulative: true, CPUSeconds: cpu, MemoryBytes: 40e6}}}
	}
	agent := steppingMeter{snaps: []lab.DaemonSnapshot{reading(t0, 10), reading(t0.Add(2*time.Second), 10.04)}, n: new(int)}
	srcs := map[string]idleSource{
		"useroverlay": {procs: map[string]lab.Proc{"router-siege": router, "router-ping": restarted}},
		"flannel":     {procs: map[string]lab.Proc{"etcd": etcd}},
		"k8s-pod":     {daemons: agent},
		"empty":       {procs: map[string]lab.Proc{"gone": proc(lab.Usage{Source: "cgroup", CPUSeconds: 2}, lab.Usage{Source: "proc", CPUSeconds: 3})}},
	}
	got := measureIdle(context.Background(), srcs, time.Millisecond, clock())
	want := map[string]*record.IdleCost{
		"useroverlay": {WindowSeconds: 2, Daemons: map[string]record.IdleDaemon{"router-siege": {CPUPercent: 5, MemoryBytes: 5e6, Source: "cgroup"}}},
		"flannel":     {WindowSeconds: 2, Daemons: map[string]record.IdleDaemon{"etcd": {CPUPercent: 1, MemoryBytes: 30e6, Source: "proc"}}},
		"k8s-pod":     {WindowSeconds: 2, Daemons: map[string]record.IdleDaemon{record.DaemonCNIAgent: {CPUPercent: 2, MemoryBytes: 40e6, Source: "cgroup", Nodes: 2}}},
	}
	if !reflect.DeepEqual(got, want) {
		for k := range want {
			t.Errorf("%s: got %+v, want %+v", k, got[k], want[k])
		}
		t.Errorf("got %d labs, want %d", len(got), len(want))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := measureIdle(ctx, map[string]idleSource{"useroverlay": {procs: map[string]lab.Proc{"r": proc(lab.Usage{}, lab.Usage{})}}}, time.Hour, clock()); got != nil {
		t.Errorf("interrupted: got %v, want nothing", got)
	}
	if got := measureIdle(context.Background(), nil, time.Hour, clock()); got != nil {
		t.Errorf("no sources: got %v", got)
	}
}

// TestPinnedCores: a cores condition pins the hosts (and a router apart on
// the next cores); without one nothing is pinned.
func TestPinnedCores(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    conditions.Set
		want []int
	}{
		{"unpinned", conditions.Set{}, nil},
		{"two cores", conditions.Set{Cores: 2}, []int{0, 1}},
		{"router apart", conditions.Set{Cores: 1, Router: "apart"}, []int{0, 1}},
	} {
		e := &env{lab: &lab.Lab{Lab: record.Lab{Conditions: tt.c}}}
		if got := pinnedCores(e); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := pinnedCores(&env{}); got != nil {
		t.Errorf("no lab: got %v", got)
	}
}
