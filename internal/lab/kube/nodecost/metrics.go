package nodecost

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
)

// MaxMetricsBytes bounds a metrics.k8s.io answer read, MaxPods the pods
// taken from it: a node agent's pods are one a node.
const (
	MaxMetricsBytes = 4 << 20
	MaxPods         = 1000
)

// PodSelectors are, by role, the label selectors of the pods that run a
// pod network's agent or kube-proxy in kube-system, as their upstream
// manifests label them.
var PodSelectors = []struct{ Role, Selector string }{
	{record.DaemonCNIAgent, "k8s-app=cilium"},
	{record.DaemonCNIAgent, "app=flannel"},
	{record.DaemonCNIOperator, "io.cilium/app=operator"},
	{record.DaemonKubeProxy, "k8s-app=kube-proxy"},
}

// PodUsage is one pod's use as metrics-server last measured it.
type PodUsage struct {
	Name        string
	CPUCores    float64 // the mean over Window
	MemoryBytes int64   // working set
	Window      time.Duration
	Time        time.Time // the window's end
}

// podMetricsList is the part of a metrics.k8s.io/v1beta1 PodMetricsList
// read.
type podMetricsList struct {
	Kind  string `json:"kind"`
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Timestamp  time.Time `json:"timestamp"`
		Window     string    `json:"window"`
		Containers []struct {
			Usage map[string]string `json:"usage"`
		} `json:"containers"`
	} `json:"items"`
}

// ParsePodMetrics reads a PodMetricsList: each pod's CPU (its containers'
// summed) and working set. A pod whose figures do not parse, or are
// negative, is refused with the list: the answer is damaged.
func ParsePodMetrics(b []byte) ([]PodUsage, error) {
	if len(b) > MaxMetricsBytes {
		return nil, fmt.Errorf("pod metrics: answer of %d bytes, more than %d", len(b), MaxMetricsBytes)
	}
	var l podMetricsList
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("pod metrics: %w", err)
	}
	if l.Kind != "PodMetricsList" {
		return nil, fmt.Errorf("pod metrics: kind %q, not PodMetricsList", l.Kind)
	}
	if len(l.Items) > MaxPods {
		return nil, fmt.Errorf("pod metrics: %d pods, more than %d", len(l.Items), MaxPods)
	}
	out := make([]PodUsage, 0, len(l.Items))
	for _, it := range l.Items {
		p := PodUsage{Name: it.Metadata.Name, Time: it.Timestamp}
		if it.Window != "" {
			w, err := time.ParseDuration(it.Window)
			if err != nil || w < 0 {
				return nil, fmt.Errorf("pod metrics: pod %s: window %q", p.Name, it.Window)
			}
			p.Window = w
		}
		for _, c := range it.Containers {
			cpu, err := quantity(c.Usage["cpu"])
			if err != nil {
				return nil, fmt.Errorf("pod metrics: pod %s: cpu: %w", p.Name, err)
			}
			mem, err := quantity(c.Usage["memory"])
			if err != nil {
				return nil, fmt.Errorf("pod metrics: pod %s: memory: %w", p.Name, err)
			}
			p.CPUCores += cpu
			p.MemoryBytes += int64(min(mem, 1<<52))
		}
		out = append(out, p)
	}
	return out, nil
}

// quantity parses a resource quantity ("12345n" cores, "51200Ki"); an
// absent one is 0.
func quantity(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, err
	}
	v := q.AsApproximateFloat64()
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e15 {
		return 0, fmt.Errorf("%q out of range", s)
	}
	return v, nil
}

// Sum adds the pods' use by role (roleOf names each pod's role; pods it
// does not know are left out) into a snapshot of rates over the longest
// window.
func Sum(pods []PodUsage, roleOf map[string]string) lab.DaemonSnapshot {
	snap := lab.DaemonSnapshot{Time: time.Now(), Source: "metrics.k8s.io", Daemons: map[string]lab.DaemonReading{}}
	for _, p := range pods {
		role, ok := roleOf[p.Name]
		if !ok {
			continue
		}
		r := snap.Daemons[role]
		r.CPURate += p.CPUCores
		r.MemoryBytes += p.MemoryBytes
		r.Window = max(r.Window, p.Window)
		r.Nodes++
		snap.Daemons[role] = r
	}
	return snap
}
