// Package k8spod is a cluster's pod network: pods dial each other by pod
// IP, through whatever CNI the cluster runs.
package k8spod

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/kube"
)

// Mode is the k8s-pod mode.
type Mode struct{}

func (Mode) Name() string { return "k8s-pod" }
func (Mode) Summary() string {
	return "Kubernetes pods on the cluster's pod network (its CNI), dialled by pod IP"
}

// BuildKube makes the pods on the pod network; peers dial the pod's IP.
func (Mode) BuildKube(b *kube.Build) ([]lab.Endpoint, error) {
	return b.EachPod(false, func(p kube.Placed) (lab.Endpoint, error) {
		return b.Endpoint(p, p.Pod.PodIP, p.Shift, "pod:eth0 ("+p.Pod.PodIP+")", "node "+p.Pod.Node+": the CNI's datapath"), nil
	})
}
