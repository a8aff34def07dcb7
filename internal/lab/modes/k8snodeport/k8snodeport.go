// Package k8snodeport is a NodePort Service in front of each server pod:
// peers dial the server's node at the node port, which kube-proxy
// translates to the pod, as a client outside the cluster would.
package k8snodeport

import (
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/kube"
)

// Mode is the k8s-nodeport mode.
type Mode struct{}

func (Mode) Name() string { return "k8s-nodeport" }
func (Mode) Summary() string {
	return "Kubernetes pods behind a NodePort Service each, dialled at their node's IP and node port"
}

// BuildKube makes the pods on the pod network and a NodePort Service for
// each endpoint, its servers' ports moved into the node port range so that
// port and node port are the same number.
func (Mode) BuildKube(b *kube.Build) ([]lab.Endpoint, error) {
	return b.EachPod(false, func(p kube.Placed) (lab.Endpoint, error) {
		svc, shift, err := b.NodePortService(p)
		if err != nil {
			return lab.Endpoint{}, err
		}
		p.Pod.Service, p.Pod.ServiceType, p.Pod.ClusterIP = svc.Name, string(svc.Spec.Type), svc.Spec.ClusterIP
		return b.Endpoint(p, p.Pod.HostIP, p.Shift+shift, "node "+p.Pod.Node+" ("+p.Pod.HostIP+") node port",
			"service "+svc.Name+" (NodePort)", "pod:eth0 ("+p.Pod.PodIP+")"), nil
	})
}
