package nodecost

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// daemon writes one daemon's cgroup files on a host.
func daemon(t *testing.T, root, cluster, host, name string, cpuNS, usage, inactive int64) {
	d := filepath.Join("cnperf", cluster, host, "daemons", name)
	write(t, filepath.Join(root, "cpuacct", d, "cpuacct.usage"), itoa(cpuNS)+"\n")
	write(t, filepath.Join(root, "memory", d, "memory.usage_in_bytes"), itoa(usage)+"\n")
	write(t, filepath.Join(root, "memory", d, "memory.stat"), "cache 10\nrss 20\ntotal_inactive_file "+itoa(inactive)+"\n")
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestCgroupsRead(t *testing.T) {
	root := t.TempDir()
	daemon(t, root, "sp1", "node1", "flanneld", 2e9, 30e6, 10e6)
	daemon(t, root, "sp1", "node2", "flanneld", 1e9, 20e6, 0)
	daemon(t, root, "sp1", "node1", "kube-proxy", 5e8, 10e6, 1e6)
	daemon(t, root, "sp1", "node3", "kube-proxy", 7e9, 10e6, 1e6)                              // a node the lab does not use
	daemon(t, root, "sp1", "cp", "cilium-operator", 3e9, 50e6, 0)                              // cluster-wide: read wherever it is
	daemon(t, root, "sp1", "node1", "not-a-daemon", 9e9, 1, 0)                                 // unknown: left out
	daemon(t, root, "other", "node1", "kube-proxy", 9e9, 10e6, 0)                              // another cluster
	write(t, filepath.Join(root, "cpuacct", "cnperf", "sp1", "relay", "cpuacct.usage"), "5\n") // no daemons dir
	snap, err := Cgroups{Root: root, Cluster: "sp1", Hosts: []string{"node1", "node2"}}.Read()
	if err != nil {
		t.Fatal(err)
	}
	if snap.Source != "cgroup" {
		t.Errorf("source %q", snap.Source)
	}
	tests := []struct {
		role  string
		cpu   float64
		mem   int64
		nodes int
	}{
		{record.DaemonCNIAgent, 3, 40e6, 2},
		{record.DaemonKubeProxy, 0.5, 9e6, 1},
		{record.DaemonCNIOperator, 3, 50e6, 1},
	}
	for _, tt := range tests {
		r, ok := snap.Daemons[tt.role]
		if !ok {
			t.Errorf("%s: not read", tt.role)
			continue
		}
		if !r.Cumulative || r.CPUSeconds != tt.cpu || r.MemoryBytes != tt.mem || r.Nodes != tt.nodes {
			t.Errorf("%s: %+v, want cpu %v s, memory %d, %d nodes, cumulative", tt.role, r, tt.cpu, tt.mem, tt.nodes)
		}
	}
	if len(snap.Daemons) != len(tests) {
		t.Errorf("roles %v, want %d", snap.Daemons, len(tests))
	}
	if got := snap.Daemons[record.DaemonCNIAgent].Names; len(got) != 1 || got[0] != "flanneld" {
		t.Errorf("agent names %v", got)
	}
}

func TestCgroupsMissing(t *testing.T) {
	root := t.TempDir()
	c := Cgroups{Root: root, Cluster: "sp9", Hosts: []string{"node1"}}
	if err := c.Check(); err == nil {
		t.Error("Check: no error for a cluster without cgroups")
	}
	if _, err := c.Read(); err == nil {
		t.Error("Read: no error for a cluster without cgroups")
	}
	// Damaged counters are skipped, not read as 0.
	write(t, filepath.Join(root, "cpuacct", "cnperf", "sp9", "node1", "daemons", "kubelet", "cpuacct.usage"), "garbage\n")
	if _, err := c.Read(); err == nil {
		t.Error("Read: no error when the only counter is damaged")
	}
}

func TestWorkingSet(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "memory.usage_in_bytes"), "100\n")
	if got := workingSet(root); got != 100 {
		t.Errorf("no memory.stat: %d, want the usage 100", got)
	}
	write(t, filepath.Join(root, "memory.stat"), "total_inactive_file 150\n")
	if got := workingSet(root); got != 0 {
		t.Errorf("inactive past usage: %d, want 0", got)
	}
}

const sample = `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[
{"metadata":{"name":"cilium-abcde","namespace":"kube-system"},"timestamp":"2026-11-27T16:00:00Z","window":"15.02s",
 "containers":[{"name":"cilium-agent","usage":{"cpu":"25000000n","memory":"204800Ki"}},{"name":"x","usage":{"cpu":"5m","memory":"1Mi"}}]},
{"metadata":{"name":"kube-proxy-q","namespace":"kube-system"},"timestamp":"2026-11-27T16:00:00Z","window":"10s",
 "containers":[{"name":"kube-proxy","usage":{"cpu":"1m","memory":"10Mi"}}]}]}`

func TestParsePodMetrics(t *testing.T) {
	pods, err := ParsePodMetrics([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	p := pods[0]
	if p.Name != "cilium-abcde" || p.Window != 15020*time.Millisecond || p.MemoryBytes != 204800*1024+1<<20 {
		t.Errorf("pod 0: %+v", p)
	}
	if d := p.CPUCores - 0.030; d > 1e-12 || d < -1e-12 {
		t.Errorf("pod 0 CPU %v cores, want 0.030", p.CPUCores)
	}
	snap := Sum(pods, map[string]string{"cilium-abcde": record.DaemonCNIAgent, "kube-proxy-q": record.DaemonKubeProxy})
	if a := snap.Daemons[record.DaemonCNIAgent]; a.Cumulative || a.Nodes != 1 || a.Window != p.Window {
		t.Errorf("agent %+v", a)
	}
	if _, ok := Sum(pods, nil).Daemons[record.DaemonKubeProxy]; ok {
		t.Error("a pod of no known role summed")
	}
}

func TestParsePodMetricsBad(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{"not json", "{"},
		{"wrong kind", `{"kind":"PodList","items":[]}`},
		{"bad cpu", `{"kind":"PodMetricsList","items":[{"metadata":{"name":"a"},"containers":[{"usage":{"cpu":"lots"}}]}]}`},
		{"negative memory", `{"kind":"PodMetricsList","items":[{"metadata":{"name":"a"},"containers":[{"usage":{"memory":"-1Mi"}}]}]}`},
		{"bad window", `{"kind":"PodMetricsList","items":[{"metadata":{"name":"a"},"window":"a while"}]}`},
		{"too big", `{"kind":"PodMetricsList","items":[` + strings.Repeat(" ", MaxMetricsBytes) + `]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParsePodMetrics([]byte(tt.in)); err == nil {
				t.Error("no error")
			}
		})
	}
}

func FuzzParsePodMetrics(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte(`{"kind":"PodMetricsList","items":[{"containers":[{"usage":{"cpu":"1e400"}}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		pods, err := ParsePodMetrics(b)
		if err != nil {
			return
		}
		for _, p := range pods {
			if p.CPUCores < 0 || p.MemoryBytes < 0 || p.Window < 0 {
				t.Errorf("pod %+v: negative figure accepted", p)
			}
		}
	})
}
