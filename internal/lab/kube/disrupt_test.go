package kube

import (
	"context"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// TestDisruptRefused: a cluster whose nodes are not a cnperf test
// cluster's is refused in one line, and so is a component the test
// cluster does not run or a cluster the spec does not list; nothing is
// made on the cluster.
func TestDisruptRefused(t *testing.T) {
	made := 0
	kc := kubeconfig(t, map[string]string{"a": fakeAPI(t, "uid-a", &made).URL})
	agent := []conditions.Disruption{{Component: conditions.ComponentCNIAgent, Node: "server", At: nil, Down: "restart"}}
	err := checkDisrupt(context.Background(), Target{Kubeconfig: kc}, agent, []string{""})
	if err == nil || !strings.Contains(err.Error(), "is not a test cluster cnperf brought up on this machine") || strings.Contains(err.Error(), "\n") {
		t.Errorf("unlabelled nodes: %v, want one line refusing another's cluster", err)
	}
	other := []conditions.Disruption{{Component: "kubelet", Node: "server", Down: "restart", Cluster: "b"}}
	err = checkDisrupt(context.Background(), Target{Clusters: []TargetCluster{{Name: "a", Kubeconfig: kc}}}, other, []string{"a"})
	if err == nil || err.Error() != "disrupt[0].cluster b: not in kubernetes.clusters" {
		t.Errorf("an unlisted cluster: %v", err)
	}
	if made != 0 {
		t.Errorf("%d namespaces made", made)
	}
	for _, tc := range []struct {
		cni, proxy, component, daemon, err string
	}{
		{"flannel-vxlan", "iptables", conditions.ComponentCNIAgent, "flanneld", ""},
		{"cilium-native", "none", conditions.ComponentCNIAgent, "cilium-agent", ""},
		{"bridge", "iptables", conditions.ComponentCNIAgent, "", "disrupt[0].component cni-agent: test cluster t's CNI bridge runs no agent"},
		{"cilium-vxlan", "none", "kube-proxy", "", "disrupt[0].component kube-proxy: test cluster t runs none (--kube-proxy none)"},
		{"cilium-vxlan", "iptables", "kube-proxy", "kube-proxy", ""},
		{"bridge", "nftables", "containerd", "containerd", ""},
	} {
		oc := ownCluster{name: "t", flags: map[string]string{"cni": tc.cni, "kube-proxy": tc.proxy}}
		daemon, err := oc.daemonOf(0, conditions.Disruption{Component: tc.component})
		if daemon != tc.daemon || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("%s on --cni %s --kube-proxy %s: %q, %v; want %q, %q", tc.component, tc.cni, tc.proxy, daemon, err, tc.daemon, tc.err)
		}
	}
}
