package lab

import (
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

func TestDaemonCosts(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC)
	cg := func(cpu float64, mem int64, nodes int) DaemonSnapshot {
		return DaemonSnapshot{Source: "cgroup", Daemons: map[string]DaemonReading{
			record.DaemonKubeProxy: {Names: []string{"kube-proxy"}, Nodes: nodes, Cumulative: true, CPUSeconds: cpu, MemoryBytes: mem}}}
	}
	rate := DaemonSnapshot{Source: "metrics.k8s.io", Daemons: map[string]DaemonReading{
		record.DaemonCNIAgent: {Nodes: 2, CPURate: 0.25, Window: 15 * time.Second, MemoryBytes: 7}}}
	tests := []struct {
		name          string
		before, after DaemonSnapshot
		wall          time.Duration
		want          map[string]record.DaemonCost
	}{
		{"counter", cg(10, 5, 2), cg(10.5, 6, 2), 2 * time.Second, map[string]record.DaemonCost{
			record.DaemonKubeProxy: {Names: []string{"kube-proxy"}, Nodes: 2, Source: "cgroup", CPUSeconds: 0.5, CPUPercent: 25, MemoryBytes: 6}}},
		{"to the nanosecond", cg(0.1, 5, 1), cg(0.3, 5, 1), 3 * time.Second, map[string]record.DaemonCost{
			record.DaemonKubeProxy: {Names: []string{"kube-proxy"}, Nodes: 1, Source: "cgroup", CPUSeconds: 0.2, CPUPercent: 6.666667, MemoryBytes: 5}}},
		{"rate times the cell", rate, rate, 4 * time.Second, map[string]record.DaemonCost{
			record.DaemonCNIAgent: {Nodes: 2, Source: "metrics.k8s.io", WindowSeconds: 15, CPUSeconds: 1, CPUPercent: 25, MemoryBytes: 7}}},
		{"share over the readings' span", DaemonSnapshot{Time: t0.Add(-time.Second), Daemons: cg(10, 5, 2).Daemons},
			DaemonSnapshot{Time: t0.Add(3 * time.Second), Source: "cgroup", Daemons: cg(11, 5, 2).Daemons}, 2 * time.Second, map[string]record.DaemonCost{
				record.DaemonKubeProxy: {Names: []string{"kube-proxy"}, Nodes: 2, Source: "cgroup", CPUSeconds: 1, CPUPercent: 25, MemoryBytes: 5}}},
		{"restarted: counter went back", cg(10, 5, 2), cg(1, 5, 2), time.Second, nil},
		{"a node gone", cg(10, 5, 2), cg(11, 5, 1), time.Second, nil},
		{"missing before", DaemonSnapshot{}, cg(11, 5, 1), time.Second, nil},
		{"no time", cg(10, 5, 2), cg(11, 5, 2), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DaemonCosts(tt.before, tt.after, t0, t0.Add(tt.wall))
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for k, w := range tt.want {
				g := got[k]
				if g.Nodes != w.Nodes || g.Source != w.Source || g.WindowSeconds != w.WindowSeconds || g.CPUSeconds != w.CPUSeconds ||
					g.CPUPercent != w.CPUPercent || g.MemoryBytes != w.MemoryBytes || len(g.Names) != len(w.Names) {
					t.Errorf("%s: got %+v, want %+v", k, g, w)
				}
			}
		})
	}
}
