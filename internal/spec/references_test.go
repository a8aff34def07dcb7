package spec_test

import (
	"strings"
	"testing"
)

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

// TestWaterfallRefused: a waterfall with no steps to take, or more cases
// than it draws, is refused in the spec's words.
func TestWaterfallRefused(t *testing.T) {
	const head = "name: x\nmodes: [bare, bridge]\nwaterfall: true\n"
	const rr = "tests: [{workload: rr, duration: 1s}]\n"
	checkSpecCases(t, []specCase{
		{"one mode", "name: x\nmodes: [bare]\nwaterfall: true\n" + rr, "waterfall: steps from each mode to the next; list at least two modes"},
		{"variants", head + rr + "variants: [{offloads: off}, {offloads: on}]\n", "waterfall: steps through the modes in their listed order; with variants or drivers the series have no one order"},
		{"drivers", head + rr + "drivers: [netns, docker]\n", "waterfall: steps through the modes in their listed order; with variants or drivers the series have no one order"},
		{"ping-pong", head + "pingpong: {min_size: 1, max_size: 1000, coverage: 0.01}\n", "waterfall: steps rr's round trip and stream's CPU per GB; the spec has neither an rr nor a stream test"},
		{"jitter only", head + "tests: [{workload: jitter, duration: 1s}]\n", "waterfall: steps rr's round trip and stream's CPU per GB; the spec has neither"},
		{"too many cases", head + "tests: [{workload: stream, duration: 1s, sweep: {param: length, from: 1000, to: 1900, step: 100}}]\n", "waterfall: 10 rr and stream cases, more than 8 (each draws a figure per metric)"},
		{"good", head + "tests: [{workload: rr, duration: 1s}, {workload: stream, duration: 1s}]\n", ""},
	})
}
