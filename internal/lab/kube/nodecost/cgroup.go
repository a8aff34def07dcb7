// Package nodecost reads what a cluster's node daemons spend: the pod
// network's agent, kube-proxy, the kubelet and the container runtime. On
// cnperf's test cluster each daemon has a cgroup of its own
// (lab.ClusterDaemonCgroup), which counts what it forks too; on someone
// else's cluster the pods' metrics (metrics.k8s.io) say what they used, as
// a rate over a window of their own.
package nodecost

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
)

// Roles maps each daemon of a test cluster's (its cgroup's name) to its
// role in a cell's record.
var Roles = map[string]string{
	"flanneld":        record.DaemonCNIAgent,
	"cilium-agent":    record.DaemonCNIAgent,
	"cilium-operator": record.DaemonCNIOperator,
	"kube-proxy":      record.DaemonKubeProxy,
	"kubelet":         record.DaemonKubelet,
	"containerd":      record.DaemonContainerd,
}

// clusterWide are roles of which a cluster runs one, wherever it runs:
// read whichever node it is on.
var clusterWide = map[string]bool{record.DaemonCNIOperator: true}

// Cgroups reads a test cluster's daemons from their cgroups.
type Cgroups struct {
	Root    string   // the cgroup v1 mount: /sys/fs/cgroup
	Cluster string   // the cluster's name
	Hosts   []string // the hosts (cnperf.io/host) of the nodes the lab's pods are on
}

// dir is the daemons' directory of host under controller ctrl.
func (c Cgroups) dir(ctrl, host string) string {
	return filepath.Join(c.Root, ctrl, filepath.Dir(lab.ClusterDaemonCgroup(c.Cluster, host, "x")))
}

// Check says whether any of the hosts has daemons' cgroups here.
func (c Cgroups) Check() error {
	for _, h := range c.Hosts {
		if _, err := os.Stat(c.dir("cpuacct", h)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("no daemon cgroups of cluster %s's nodes %s under %s", c.Cluster, strings.Join(c.Hosts, ", "), filepath.Join(c.Root, "cpuacct"))
}

// Read reads every known daemon's cumulative CPU and working set on the
// hosts (and the cluster-wide ones on any host), summed by role.
func (c Cgroups) Read() (lab.DaemonSnapshot, error) {
	snap := lab.DaemonSnapshot{Time: time.Now(), Source: "cgroup", Daemons: map[string]lab.DaemonReading{}}
	hosts, err := os.ReadDir(filepath.Join(c.Root, "cpuacct", "cnperf", c.Cluster))
	if err != nil {
		return snap, fmt.Errorf("cluster %s's cgroups: %w", c.Cluster, err)
	}
	for _, h := range hosts {
		if !h.IsDir() {
			continue
		}
		host := h.Name()
		ours := slices.Contains(c.Hosts, host)
		daemons, err := os.ReadDir(c.dir("cpuacct", host))
		if err != nil {
			continue // the relay, the control plane's own cgroups
		}
		for _, d := range daemons {
			role, known := Roles[d.Name()]
			if !known || !d.IsDir() || !(ours || clusterWide[role]) {
				continue
			}
			ns, err := readInt(filepath.Join(c.dir("cpuacct", host), d.Name(), "cpuacct.usage"))
			if err != nil {
				continue // gone between the listing and now
			}
			r := snap.Daemons[role]
			r.Cumulative = true
			r.CPUSeconds += float64(ns) / 1e9
			r.MemoryBytes += workingSet(filepath.Join(c.dir("memory", host), d.Name()))
			r.Nodes++
			if !slices.Contains(r.Names, d.Name()) {
				r.Names = append(r.Names, d.Name())
				slices.Sort(r.Names)
			}
			snap.Daemons[role] = r
		}
	}
	if len(snap.Daemons) == 0 {
		if err := c.Check(); err != nil {
			return snap, err
		}
		return snap, fmt.Errorf("cluster %s's nodes %s: no daemon's counters could be read", c.Cluster, strings.Join(c.Hosts, ", "))
	}
	return snap, nil
}

// workingSet is a memory cgroup's usage less its inactive file cache (the
// kubelet's and metrics-server's working set), 0 when it cannot be read.
func workingSet(dir string) int64 {
	usage, err := readInt(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return usage
	}
	return max(0, usage-statValue(string(b), "total_inactive_file"))
}

// statValue is a key's value in a memory.stat file, 0 when absent.
func statValue(stat, key string) int64 {
	for _, l := range strings.Split(stat, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && f[0] == key {
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil && v >= 0 {
				return v
			}
		}
	}
	return 0
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if v < 0 {
		return 0, fmt.Errorf("%s: negative", path)
	}
	return v, nil
}
