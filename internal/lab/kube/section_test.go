package kube

import (
	"testing"

	"github.com/cnperf/cnperf/internal/testutil/speccases"
)

// TestKubernetes: the driver decodes kubernetes: strictly and bounds it
// and node_placement in their own field names, one line each, whichever
// driver the spec runs on; a good spec passes.
func TestKubernetes(t *testing.T) {
	const base = "name: x\ndriver: kubernetes\nmodes: [k8s-host, k8s-pod]\nreference: k8s-host\n"
	speccases.Check(t, Driver{}.CheckSpec, []speccases.Case{
		{"all fields", base + "kubernetes: {kubeconfig: /root/.kube/config, context: lab, image: 'reg.local:5000/cnperf:v1', image_pull_policy: Never, nodes: [n1, n2], policy_probe_seconds: 5}\n", ""},
		{"same and cross node as variants", base + "variants: [{node_placement: same-node}, {node_placement: cross-node}]\n", ""},
		{"bad placement", base + "conditions: {node_placement: near}\n", `node_placement "near": use same-node or cross-node`},
		{"placement off a cluster", "name: x\nmodes: [bare]\nconditions: {node_placement: same-node}\n", "node_placement: places pods on Kubernetes nodes; use driver: kubernetes"},
		{"block off a cluster", "name: x\nmodes: [bare]\nkubernetes: {image: a}\n", "kubernetes: only the kubernetes driver uses it"},
		{"bad pull policy", base + "kubernetes: {image_pull_policy: Sometimes}\n", `kubernetes.image_pull_policy "Sometimes"`},
		{"bad image", base + "kubernetes: {image: 'has space'}\n", `kubernetes.image "has space"`},
		{"bad node", base + "kubernetes: {nodes: [Node_1]}\n", `kubernetes.nodes[0] "Node_1": not a node name`},
		{"node twice", base + "kubernetes: {nodes: [a, a]}\n", `kubernetes.nodes[1] "a": named twice`},
		{"policy sweep", base + "variants: [{network_policy: none}, {network_policy: allow}, {network_policy: probe}, {policy_rules: 10}, {policy_rules: 1000}]\n", ""},
		{"policy off a cluster", "name: x\nmodes: [bare]\nconditions: {network_policy: allow}\n", "network_policy: NetworkPolicies apply on Kubernetes only; the netns driver has none"},
		{"policy rules off a cluster", "name: x\nmodes: [bare]\nvariants: [{policy_rules: 10}]\n", "policy_rules: NetworkPolicies apply on Kubernetes only"},
		{"policy beside another driver", "name: x\ndrivers: [kubernetes, netns]\nmodes: [bare]\nconditions: {network_policy: allow}\n", "the netns driver has none"},
		{"policy rules over the bound", base + "variants: [{policy_rules: 5000}]\n", "policy_rules 5000: want 1..1000"},
		{"policy unknown", base + "conditions: {network_policy: deny}\n", `network_policy "deny": use none, allow or probe`},
		{"policy probe over the bound", base + "kubernetes: {policy_probe_seconds: 301}\n", "kubernetes.policy_probe_seconds 301: want 1..300"},
		{"policy probe not seconds", base + "kubernetes: {policy_probe_seconds: 5s}\n", "policy_probe_seconds"},
		{"unknown field", base + "kubernetes: {namespace: x}\n", "namespace"},
	})
}

// TestKubernetesClusters: several clusters in one spec, each selected by
// conditions' cluster; every way to get them wrong is one line naming the
// field as the user wrote it.
func TestKubernetesClusters(t *testing.T) {
	const base = "name: x\ndriver: kubernetes\nmodes: [k8s-host, k8s-pod]\nreference: k8s-host\n"
	const two = "kubernetes: {clusters: [{name: bridge, test_cluster: cmp_bridge, cni: bridge}, {name: flannel, kubeconfig: /k, context: fl}]}\n"
	const both = "variants: [{cluster: bridge}, {cluster: flannel}]\n"
	speccases.Check(t, Driver{}.CheckSpec, []speccases.Case{
		{"two clusters as variants", base + two + both, ""},
		{"clusters by placement", base + two + "variants: [{cluster: bridge, node_placement: same-node}, {cluster: bridge, node_placement: cross-node}, {name: fl, cluster: flannel}]\n", ""},
		{"one cluster is every lab's", base + "kubernetes: {clusters: [{name: a, context: c}]}\n", ""},
		{"one cluster by conditions", base + "kubernetes: {clusters: [{name: a, context: c}]}\nconditions: {cluster: a}\n", ""},
		{"cluster without clusters", base + "variants: [{cluster: a}, {cluster: b}]\n", `variants[0].cluster "a": the spec lists no kubernetes.clusters`},
		{"conditions cluster without clusters", base + "kubernetes: {image: i}\nconditions: {cluster: a}\n", `conditions.cluster "a": the spec lists no kubernetes.clusters`},
		{"cluster off a cluster", "name: x\nmodes: [bare]\nconditions: {cluster: a}\n", "cluster: selects one of kubernetes.clusters; use driver: kubernetes"},
		{"unknown cluster", base + two + "variants: [{cluster: bridge}, {cluster: cilium}]\n", `variants[1].cluster "cilium": not in kubernetes.clusters (bridge, flannel)`},
		{"unknown conditions cluster", base + two + "conditions: {cluster: calico}\n", `conditions.cluster "calico": not in kubernetes.clusters (bridge, flannel)`},
		{"bad cluster in a variant", base + two + "variants: [{cluster: Bridge}, {cluster: flannel}]\n", `variants[0].cluster "Bridge": not a cluster's name`},
		{"none selected", base + two, "kubernetes.clusters: 2 clusters, and lab k8s-host selects none"},
		{"a lab selects none", base + two + "variants: [{cluster: bridge}, {node_placement: same-node}]\n", "lab k8s-host/nodes=same-node selects none"},
		{"a cluster no lab is on", base + two + "variants: [{cluster: bridge}, {name: b2, cluster: bridge, node_placement: same-node}]\n", "kubernetes.clusters[1] (flannel): no lab is on it"},
		{"top-level kubeconfig too", base + "kubernetes: {kubeconfig: /k, clusters: [{name: a, context: c}]}\n", "kubernetes.kubeconfig, context (or --kubeconfig, --context) and kubernetes.clusters"},
		{"no name", base + "kubernetes: {clusters: [{context: c}]}\n", "kubernetes.clusters[0]: name: must not be empty"},
		{"bad name", base + "kubernetes: {clusters: [{name: My_Cluster, context: c}]}\n", "kubernetes.clusters[0] (My_Cluster): name: use 1-32 of a-z"},
		{"name twice", base + "kubernetes: {clusters: [{name: a, context: c}, {name: a, context: d}]}\n" + "variants: [{cluster: a}]\n", "kubernetes.clusters[1] (a): name: named twice"},
		{"one test cluster under two names", base + "kubernetes: {clusters: [{name: a, test_cluster: t1, cni: bridge}, {name: b, test_cluster: t1}]}\n" + "variants: [{cluster: a}, {cluster: b}]\n",
			"kubernetes.clusters[1] (b): test_cluster t1: also kubernetes.clusters[0] (a)'s; list each cluster once"},
		{"two test clusters", base + "kubernetes: {clusters: [{name: a, test_cluster: t1}, {name: b, test_cluster: t2}]}\n" + "variants: [{cluster: a}, {cluster: b}]\n", ""},
		{"nothing to reach", base + "kubernetes: {clusters: [{name: a}]}\n", "kubernetes.clusters[0] (a): give kubeconfig and context, or test_cluster"},
		{"test cluster and kubeconfig", base + "kubernetes: {clusters: [{name: a, test_cluster: t, kubeconfig: /k}]}\n", "kubernetes.clusters[0] (a): test_cluster and kubeconfig or context"},
		{"bad test cluster", base + "kubernetes: {clusters: [{name: a, test_cluster: cmp-bridge}]}\n", `kubernetes.clusters[0] (a): test_cluster "cmp-bridge": not a test cluster's name`},
		{"kube_proxy not a mode", base + "kubernetes: {clusters: [{name: a, test_cluster: t1, kube_proxy: ipvs}]}\n", `kubernetes.clusters[0] (a): kube_proxy "ipvs": with test_cluster, iptables, nftables or none`},
		{"cni off a test cluster", base + "kubernetes: {clusters: [{name: a, context: c, cni: bridge}]}\n", "kubernetes.clusters[0] (a): cni: says how a test cluster is brought up"},
		{"too many", base + "kubernetes: {clusters: [{name: a, context: c}, {name: b, context: c}, {name: c, context: c}, {name: d, context: c}, {name: e, context: c}, {name: f, context: c}, {name: g, context: c}, {name: h, context: c}, {name: i, context: c}]}\n", "kubernetes.clusters: 9, more than 8"},
		{"with drivers", "name: x\ndrivers: [netns, kubernetes]\nmodes: [k8s-pod]\nreference: k8s-pod\nkubernetes: {clusters: [{name: a, context: c}]}\n", "kubernetes.clusters: every lab is on one of the clusters; use driver: kubernetes alone"},
		{"policy probe over the bound", base + "kubernetes: {policy_probe_seconds: 301}\n", "kubernetes.policy_probe_seconds 301: want 1..300"},
		{"policy probe not seconds", base + "kubernetes: {policy_probe_seconds: 5s}\n", "policy_probe_seconds"},
		{"unknown field", base + "kubernetes: {clusters: [{name: a, context: c, server: x}]}\n", `line 5: unknown field "kubernetes.clusters[0].server"`},
	})
}
