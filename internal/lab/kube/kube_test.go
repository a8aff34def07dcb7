package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

func node(name string, ready bool, mods ...func(*corev1.Node)) corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
	for _, m := range mods {
		m(&n)
	}
	return n
}

func tainted(n *corev1.Node) {
	n.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
}

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }

func TestAssignNodes(t *testing.T) {
	pingpong := lab.Topology{Hosts: []lab.HostSpec{{Name: "siege"}, {Name: "ping"}, {Name: "pong"}}}
	sockets := lab.Topology{Hosts: []lab.HostSpec{{Name: "client"}, {Name: "server"}}}
	two := []corev1.Node{node("b", true), node("a", true), node("cp", true, tainted), node("off", false), node("c", true, cordoned)}
	for _, tc := range []struct {
		name      string
		nodes     []corev1.Node
		named     []string
		placement string
		topo      lab.Topology
		want      map[string]string
		err       string
	}{
		{name: "cross-node takes usable nodes in turn, by name", nodes: two, placement: conditions.CrossNode, topo: pingpong,
			want: map[string]string{"siege": "a", "ping": "b", "pong": "a"}},
		{name: "same-node puts all on the first", nodes: two, placement: conditions.SameNode, topo: sockets,
			want: map[string]string{"client": "a", "server": "a"}},
		{name: "named nodes in the user's order", nodes: two, named: []string{"b", "a"}, placement: conditions.CrossNode, topo: sockets,
			want: map[string]string{"client": "b", "server": "a"}},
		{name: "cross-node on one usable node", nodes: []corev1.Node{node("a", true), node("cp", true, tainted)},
			placement: conditions.CrossNode, topo: sockets, err: "cross-node needs two schedulable nodes; the cluster offers 1 (a)"},
		{name: "a named node that is tainted", nodes: two, named: []string{"cp"}, placement: conditions.SameNode, topo: sockets,
			err: "node cp: tainted node-role.kubernetes.io/control-plane:NoSchedule"},
		{name: "a named node that does not exist", nodes: two, named: []string{"zz"}, placement: conditions.SameNode, topo: sockets,
			err: "node zz: no such node"},
		{name: "no usable node", nodes: []corev1.Node{node("off", false)}, placement: conditions.SameNode, topo: sockets,
			err: "no node is Ready, schedulable and untainted (1 nodes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := assignNodes(tc.nodes, tc.named, tc.placement, tc.topo)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for h, n := range tc.want {
				if got[h] != n {
					t.Errorf("host %s on %s, want %s (all: %v)", h, got[h], n, got)
				}
			}
		})
	}
}

func TestNamesAreKubernetesNames(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{Namespace("seed_quick_k8s_pod"), "cnperf-seed-quick-k8s-pod"},
		{podName("h1", "server1"), "h1-server1"},
		{podName("Siege", "host"), "siege-host"},
		{podName(strings.Repeat("a", 70), "x"), strings.Repeat("a", 63)},
		{labelValue("host.example.com"), "host.example.com"},
		{labelValue("-weird name!-"), "weirdname"},
	} {
		if tc.in != tc.want {
			t.Errorf("got %q, want %q", tc.in, tc.want)
		}
	}
}

func TestValidateRefusesWhatAClusterCannotDo(t *testing.T) {
	base := lab.Config{Name: "tk", Mode: fakeMode{}, Options: Target{Image: "cnperf/workload:v1"}}
	for _, tc := range []struct {
		name string
		mod  func(*lab.Config)
		err  string
	}{
		{"no image", func(c *lab.Config) { c.Options = Target{} }, "needs a workload image"},
		{"bad pull policy", func(c *lab.Config) { c.Options = Target{Image: "cnperf/workload:v1", PullPolicy: "Sometimes"} }, `image pull policy "Sometimes"`},
		{"a condition on hosts", func(c *lab.Config) { c.Conditions.Cores = 1 }, "conditions cores=1 change the hosts"},
		{"a chain", func(c *lab.Config) { c.Topology.Chain = true }, "chain"},
		{"node placement is fine", func(c *lab.Config) { c.Conditions.NodePlacement = conditions.SameNode }, ""},
		{"ip_family ipv6 is fine", func(c *lab.Config) { c.Conditions.IPFamily = conditions.IPv6 }, ""},
		{"ip_family dual is fine", func(c *lab.Config) { c.Conditions.IPFamily = conditions.Dual }, ""},
		{"a policy with ipv6", func(c *lab.Config) {
			c.Conditions.IPFamily, c.Conditions.NetworkPolicy = conditions.IPv6, conditions.PolicyAllow
		}, "lab: ip_family ipv6 with a network policy: the kubernetes driver's policies are IPv4 only"},
		{"policy rules with dual", func(c *lab.Config) { c.Conditions.IPFamily, c.Conditions.PolicyRules = conditions.Dual, 10 }, "ip_family dual with a network policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.mod(&cfg)
			err := Driver{}.Validate(cfg)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
		})
	}
}

type fakeMode struct{}

func (fakeMode) Name() string                             { return "k8s-fake" }
func (fakeMode) Summary() string                          { return "" }
func (fakeMode) BuildKube(*Build) ([]lab.Endpoint, error) { return nil, nil }
