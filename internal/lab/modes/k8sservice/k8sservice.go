// Package k8sservice is a ClusterIP Service in front of each server pod:
// peers dial the Service's virtual IP, which kube-proxy (or the CNI, where
// it replaces kube-proxy) translates to the pod.
package k8sservice

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/kube"
)

// Mode is the k8s-service mode.
type Mode struct{}

func (Mode) Name() string { return "k8s-service" }
func (Mode) Summary() string {
	return "Kubernetes pods behind a ClusterIP Service each, dialled by the Service's IP (kube-proxy's or the CNI's path)"
}

// BuildKube makes the pods on the pod network and a ClusterIP Service for
// each endpoint.
func (Mode) BuildKube(b *kube.Build) ([]lab.Endpoint, error) {
	return b.EachPod(false, func(p kube.Placed) (lab.Endpoint, error) {
		svc, err := b.Service(p, corev1.ServiceTypeClusterIP, p.Shift)
		if err != nil {
			return lab.Endpoint{}, err
		}
		p.Pod.Service, p.Pod.ServiceType, p.Pod.ClusterIP = svc.Name, string(svc.Spec.Type), svc.Spec.ClusterIP
		return b.Endpoint(p, svc.Spec.ClusterIP, p.Shift, "service "+svc.Name+" ("+svc.Spec.ClusterIP+", ClusterIP)",
			"pod:eth0 ("+p.Pod.PodIP+")", "node "+p.Pod.Node), nil
	})
}
