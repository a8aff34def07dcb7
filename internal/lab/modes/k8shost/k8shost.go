// Package k8shost is Kubernetes' host network (hostNetwork pods): the
// reference a cluster's pod network is measured against, as Docker's host
// mode is for its bridge.
package k8shost

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/kube"
)

// Mode is the k8s-host mode.
type Mode struct{}

func (Mode) Name() string { return "k8s-host" }
func (Mode) Summary() string {
	return "Kubernetes pods on their nodes' network (hostNetwork), dialled by node IP: the cluster's reference"
}

// BuildKube makes hostNetwork pods. Pods on one node share its stack, so
// the second endpoint on a node takes the next span of ports, and so on.
func (Mode) BuildKube(b *kube.Build) ([]lab.Endpoint, error) {
	onNode := map[string]int{}
	return b.EachPod(true, func(p kube.Placed) (lab.Endpoint, error) {
		shift := onNode[p.Pod.Node] * b.Span()
		onNode[p.Pod.Node]++
		return b.Endpoint(p, p.Pod.HostIP, shift, "node "+p.Pod.Node+": its own stack ("+p.Pod.HostIP+")"), nil
	})
}
