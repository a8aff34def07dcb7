package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/kube/nodecost"
	"github.com/cnperf/cnperf/internal/record"
)

// The labels cnperf's test cluster gives its nodes: the cluster's name and
// the node's lab host, which name its daemons' cgroups.
const (
	LabelCluster = "cnperf.io/cluster"
	LabelHost    = "cnperf.io/host"
)

// cgroupRoot is where this machine mounts the cgroup v1 controllers.
const cgroupRoot = "/sys/fs/cgroup"

// DaemonMeter reads the node daemons of the nodes the lab's pods are on:
// from their cgroups on a test cluster of this machine's (nodes labelled
// cnperf.io/cluster, with the cgroups here), else from the pods' metrics
// where the cluster serves metrics.k8s.io; otherwise it says why not.
func (r *Runtime) DaemonMeter() (lab.DaemonMeter, error) {
	ctx := context.Background()
	cluster, hosts := "", []string(nil)
	for _, name := range r.nodes {
		n := &corev1.Node{}
		if err := r.c.get(ctx, r.c.core, "", "nodes", name, n); err != nil {
			return nil, fmt.Errorf("node %s: %w", name, err)
		}
		c, h := n.Labels[LabelCluster], n.Labels[LabelHost]
		if c == "" || h == "" || (cluster != "" && c != cluster) {
			cluster = ""
			break
		}
		cluster, hosts = c, append(hosts, h)
	}
	if cluster != "" {
		cg := nodecost.Cgroups{Root: cgroupRoot, Cluster: cluster, Hosts: hosts}
		if err := cg.Check(); err == nil {
			return cg, nil
		}
	}
	m := &podMetrics{r: r}
	if _, err := m.Read(); err != nil {
		return nil, err
	}
	return m, nil
}

// podMetrics reads the node agents' and kube-proxy's pods in kube-system
// from metrics.k8s.io (metrics-server), those on the lab's nodes only.
type podMetrics struct{ r *Runtime }

// Read lists the agents' pods on the lab's nodes (again each time: a pod
// restarted has a new name) and sums their last metrics.
func (m *podMetrics) Read() (lab.DaemonSnapshot, error) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	c := m.r.c
	roleOf := map[string]string{}
	var usage []nodecost.PodUsage
	for _, s := range nodecost.PodSelectors {
		list := &corev1.PodList{}
		err := c.core.Get().Namespace("kube-system").Resource("pods").Param("labelSelector", s.Selector).
			Param("limit", fmt.Sprint(nodecost.MaxPods)).Do(ctx).Into(list)
		if err != nil {
			return lab.DaemonSnapshot{}, fmt.Errorf("list kube-system pods %s: %w", s.Selector, err)
		}
		found := false
		for _, p := range list.Items {
			if slices.Contains(m.r.nodes, p.Spec.NodeName) || s.Role == record.DaemonCNIOperator {
				roleOf[p.Name], found = s.Role, true
			}
		}
		if !found {
			continue
		}
		st, err := c.core.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods").
			Param("labelSelector", s.Selector).Stream(ctx)
		if err != nil {
			return lab.DaemonSnapshot{}, fmt.Errorf("no pod metrics (metrics.k8s.io, metrics-server): %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(st, nodecost.MaxMetricsBytes+1))
		st.Close()
		if err != nil {
			return lab.DaemonSnapshot{}, fmt.Errorf("pod metrics: %w", err)
		}
		pods, err := nodecost.ParsePodMetrics(b)
		if err != nil {
			return lab.DaemonSnapshot{}, err
		}
		usage = append(usage, pods...)
	}
	snap := nodecost.Sum(usage, roleOf)
	if len(snap.Daemons) == 0 {
		return snap, errors.New("no CNI agent or kube-proxy pods with metrics in kube-system on the lab's nodes")
	}
	return snap, nil
}
