package spec_test

import (
	"strings"
	"testing"
)

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

// TestKubernetesClusters: several clusters in one spec, each selected by
// conditions' cluster; every way to get them wrong is one line naming the
// field as the user wrote it.
func TestKubernetesClusters(t *testing.T) {
	const base = "name: x\ndriver: kubernetes\nmodes: [k8s-host, k8s-pod]\nreference: k8s-host\n"
	const two = "kubernetes: {clusters: [{name: bridge, test_cluster: cmp_bridge, cni: bridge}, {name: flannel, kubeconfig: /k, context: fl}]}\n"
	const both = "variants: [{cluster: bridge}, {cluster: flannel}]\n"
	checkSpecCases(t, []specCase{
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
		{"cni off a test cluster", base + "kubernetes: {clusters: [{name: a, context: c, cni: bridge}]}\n", "kubernetes.clusters[0] (a): cni: says how a test cluster is brought up"},
		{"too many", base + "kubernetes: {clusters: [{name: a, context: c}, {name: b, context: c}, {name: c, context: c}, {name: d, context: c}, {name: e, context: c}, {name: f, context: c}, {name: g, context: c}, {name: h, context: c}, {name: i, context: c}]}\n", "kubernetes.clusters: 9, more than 8"},
		{"with drivers", "name: x\ndrivers: [netns, kubernetes]\nmodes: [k8s-pod]\nreference: k8s-pod\nkubernetes: {clusters: [{name: a, context: c}]}\n", "kubernetes.clusters: every lab is on one of the clusters; use driver: kubernetes alone"},
		{"unknown field", base + "kubernetes: {clusters: [{name: a, context: c, server: x}]}\n", `unknown field "kubernetes.clusters[].server"`},
	})
}

// TestClusterSeries: a variant's cluster labels its series by the
// cluster's name, first, and the reference follows the first variant.
func TestClusterSeries(t *testing.T) {
	s, err := parse("name: x\ndriver: kubernetes\nmodes: [k8s-host, k8s-pod]\nreference: k8s-host\n" +
		"kubernetes: {clusters: [{name: bridge, context: b}, {name: flannel, context: f}]}\n" +
		"variants: [{cluster: bridge, node_placement: cross-node}, {cluster: flannel, node_placement: cross-node}]\n")
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"k8s-host/bridge,nodes=cross-node", "k8s-host/flannel,nodes=cross-node", "k8s-pod/bridge,nodes=cross-node", "k8s-pod/flannel,nodes=cross-node"}
	if got := s.ModeKeys(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("series %v, want %v", got, want)
	}
	for _, l := range s.Labs() {
		if c := l.Conditions.Cluster; !strings.Contains(l.Key, "/"+c+",") {
			t.Errorf("lab %s is on cluster %q", l.Key, c)
		}
	}
	refs := s.VariantReferences()
	if got := refs["k8s-pod/flannel,nodes=cross-node"]; got != "k8s-host/flannel,nodes=cross-node" {
		t.Errorf("k8s-pod on flannel is compared with %q, want k8s-host on flannel", got)
	}
	s.Reference = "k8s-host/bridge,nodes=cross-node"
	if s.VariantReferences() != nil {
		t.Error("a reference given as a series is every series': no per-variant references")
	}
}

// TestVariantReferences: with reference_per, a series compares with the
// reference mode under the first variant that shares its values of those
// conditions; a spec of several clusters compares each series within its
// own cluster and conditions; any other spec has one reference.
func TestVariantReferences(t *testing.T) {
	const k8s = "name: x\ndriver: kubernetes\nmodes: [k8s-host, k8s-pod]\nreference: k8s-host\n"
	const placements = "variants: [{name: same-node, node_placement: same-node}, {name: cross-node, node_placement: cross-node}]\n"
	for _, c := range []struct {
		name, spec string
		want       map[string]string // nil: one reference for every series
		scope      string
	}{
		{"placements", k8s + "reference_per: [node_placement]\n" + placements, map[string]string{
			"k8s-host/same-node": "k8s-host/same-node", "k8s-pod/same-node": "k8s-host/same-node",
			"k8s-host/cross-node": "k8s-host/cross-node", "k8s-pod/cross-node": "k8s-host/cross-node"}, "node placement"},
		{"placements, not per", k8s + placements, nil, ""},
		{"placements with policies", k8s + "reference_per: [node_placement]\nvariants: [{node_placement: cross-node, network_policy: none}, {node_placement: cross-node, policy_rules: 100}, {node_placement: same-node, network_policy: none}]\n", map[string]string{
			"k8s-pod/nodes=cross-node,rules=100":    "k8s-host/nodes=cross-node,policy=none",
			"k8s-host/nodes=cross-node,rules=100":   "k8s-host/nodes=cross-node,policy=none",
			"k8s-pod/nodes=same-node,policy=none":   "k8s-host/nodes=same-node,policy=none",
			"k8s-host/nodes=cross-node,policy=none": "k8s-host/nodes=cross-node,policy=none",
			"k8s-pod/nodes=cross-node,policy=none":  "k8s-host/nodes=cross-node,policy=none",
			"k8s-host/nodes=same-node,policy=none":  "k8s-host/nodes=same-node,policy=none"}, "node placement"},
		{"ip families", "name: x\nmodes: [bare, bridge]\nreference: bare\nreference_per: [ip_family]\nvariants: [{ip_family: ipv4}, {ip_family: ipv6}]\n", map[string]string{
			"bare/ip=ipv4": "bare/ip=ipv4", "bridge/ip=ipv4": "bare/ip=ipv4", "bare/ip=ipv6": "bare/ip=ipv6", "bridge/ip=ipv6": "bare/ip=ipv6"}, "ip family"},
		{"ip families, not per", "name: x\nmodes: [bare, bridge]\nreference: bare\nvariants: [{ip_family: ipv4}, {ip_family: ipv6}]\n", nil, ""},
		{"clusters", k8s + "kubernetes: {clusters: [{name: a, context: a}, {name: b, context: b}]}\nvariants: [{cluster: a}, {cluster: b}]\n", map[string]string{
			"k8s-host/a": "k8s-host/a", "k8s-pod/a": "k8s-host/a", "k8s-host/b": "k8s-host/b", "k8s-pod/b": "k8s-host/b"}, "cluster and conditions"},
		{"one cluster, selected by one variant", k8s + "reference_per: [node_placement]\nkubernetes: {clusters: [{name: a, context: a}]}\nvariants: [{name: sel, cluster: a, node_placement: cross-node}, {name: unsel, node_placement: cross-node, policy_rules: 10}]\n", map[string]string{
			"k8s-host/sel": "k8s-host/sel", "k8s-pod/sel": "k8s-host/sel", "k8s-host/unsel": "k8s-host/sel", "k8s-pod/unsel": "k8s-host/sel"}, "node placement"},
		{"clusters per placement", k8s + "reference_per: [node_placement]\nkubernetes: {clusters: [{name: a, context: a}, {name: b, context: b}]}\nvariants: [{cluster: a, node_placement: cross-node, policy_rules: 10}, {cluster: a, node_placement: cross-node}, {cluster: b, node_placement: cross-node}]\n", map[string]string{
			"k8s-pod/a,nodes=cross-node": "k8s-host/a,nodes=cross-node,rules=10", "k8s-pod/b,nodes=cross-node": "k8s-host/b,nodes=cross-node",
			"k8s-host/a,nodes=cross-node": "k8s-host/a,nodes=cross-node,rules=10", "k8s-host/b,nodes=cross-node": "k8s-host/b,nodes=cross-node",
			"k8s-pod/a,nodes=cross-node,rules=10": "k8s-host/a,nodes=cross-node,rules=10", "k8s-host/a,nodes=cross-node,rules=10": "k8s-host/a,nodes=cross-node,rules=10"}, "cluster and node placement"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := parse(c.spec)
			if err == nil {
				err = s.Validate()
			}
			if err != nil {
				t.Fatal(err)
			}
			got := s.VariantReferences()
			if (got == nil) != (c.want == nil) || len(got) != len(c.want) {
				t.Fatalf("references %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s compares with %q, want %q", k, got[k], v)
				}
			}
			if got := s.ReferenceScope(); got != c.scope {
				t.Errorf("scope %q, want %q", got, c.scope)
			}
		})
	}
}

// TestReferencePerRefused: a reference_per that names no condition, or
// cannot apply, is refused in the spec's words.
func TestReferencePerRefused(t *testing.T) {
	const k8s = "name: x\ndriver: kubernetes\nmodes: [k8s-host, k8s-pod]\n"
	const placements = "variants: [{name: same-node, node_placement: same-node}, {name: cross-node, node_placement: cross-node}]\n"
	checkSpecCases(t, []specCase{
		{"not a condition", k8s + "reference: k8s-host\nreference_per: [nodes]\n" + placements, `reference_per[0] "nodes": not a condition (use cores, `},
		{"twice", k8s + "reference: k8s-host\nreference_per: [node_placement, node_placement]\n" + placements, `reference_per: "node_placement" is listed twice`},
		{"no variants", k8s + "reference: k8s-host\nreference_per: [node_placement]\n", "reference_per: keeps a series' reference in its own variant; the spec sweeps no variants"},
		{"a series", k8s + "reference: k8s-host/cross-node\nreference_per: [node_placement]\n" + placements, `reference_per: the reference "k8s-host/cross-node" is one series, every series'; name a mode (reference: k8s-host)`},
		{"good", k8s + "reference: k8s-host\nreference_per: [node_placement]\n" + placements, ""},
	})
}
