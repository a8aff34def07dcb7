package spec_test

import "testing"

// TestKubernetes: kubernetes: and node_placement are bounded in their own
// field names, one line each, and a good spec parses.
func TestKubernetes(t *testing.T) {
	const base = "name: x\ndriver: kubernetes\nmodes: [k8s-host, k8s-pod]\nreference: k8s-host\n"
	checkSpecCases(t, []specCase{
		{"all fields", base + "kubernetes: {kubeconfig: /root/.kube/config, context: lab, image: 'reg.local:5000/cnperf:v1', image_pull_policy: Never, nodes: [n1, n2]}\n", ""},
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
		{"unknown field", base + "kubernetes: {namespace: x}\n", "namespace"},
	})
}
