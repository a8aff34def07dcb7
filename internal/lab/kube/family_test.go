package kube

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// TestPodAddrs: a lab dialling IPv6 takes the pod's and its node's IPv6
// addresses from the status' lists, whichever family the cluster lists
// first; an IPv4-only pod has none to give.
func TestPodAddrs(t *testing.T) {
	dual := &corev1.Pod{Status: corev1.PodStatus{PodIP: "198.18.65.4", HostIP: "198.18.0.2",
		PodIPs:  []corev1.PodIP{{IP: "198.18.65.4"}, {IP: "2001:2:0:8101::4"}},
		HostIPs: []corev1.HostIP{{IP: "198.18.0.2"}, {IP: "2001:2::2"}}}}
	v6first := &corev1.Pod{Status: corev1.PodStatus{PodIP: "2001:2:0:8101::4", HostIP: "2001:2::2",
		PodIPs:  []corev1.PodIP{{IP: "2001:2:0:8101::4"}, {IP: "198.18.65.4"}},
		HostIPs: []corev1.HostIP{{IP: "2001:2::2"}, {IP: "198.18.0.2"}}}}
	v4only := &corev1.Pod{Status: corev1.PodStatus{PodIP: "198.18.65.4", HostIP: "198.18.0.2",
		PodIPs: []corev1.PodIP{{IP: "198.18.65.4"}}, HostIPs: []corev1.HostIP{{IP: "198.18.0.2"}}}}
	for _, c := range []struct {
		name              string
		pod               *corev1.Pod
		v6                bool
		wantPod, wantHost string
	}{
		{"dual, IPv6", dual, true, "2001:2:0:8101::4", "2001:2::2"},
		{"dual, IPv4", dual, false, "198.18.65.4", "198.18.0.2"},
		{"IPv6 first, IPv4", v6first, false, "198.18.65.4", "198.18.0.2"},
		{"IPv6 first, IPv6", v6first, true, "2001:2:0:8101::4", "2001:2::2"},
		{"IPv4 only, IPv6", v4only, true, "", ""},
	} {
		p, h := podAddrs(c.pod, c.v6)
		if p != c.wantPod || h != c.wantHost {
			t.Errorf("%s: got %q %q, want %q %q", c.name, p, h, c.wantPod, c.wantHost)
		}
	}
}

// TestServiceFamilies: ipv6 asks a single-stack IPv6 Service, dual one of
// both families with IPv6 first; ipv4 leaves the cluster's default.
func TestServiceFamilies(t *testing.T) {
	for _, c := range []struct {
		family   string
		policy   corev1.IPFamilyPolicy
		families []corev1.IPFamily
	}{
		{conditions.IPv4, "", nil},
		{conditions.IPv6, corev1.IPFamilyPolicySingleStack, []corev1.IPFamily{corev1.IPv6Protocol}},
		{conditions.Dual, corev1.IPFamilyPolicyPreferDualStack, []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}},
	} {
		svc := &corev1.Service{}
		serviceFamilies(svc, c.family)
		var got corev1.IPFamilyPolicy
		if svc.Spec.IPFamilyPolicy != nil {
			got = *svc.Spec.IPFamilyPolicy
		}
		if got != c.policy || !slices.Equal(svc.Spec.IPFamilies, c.families) {
			t.Errorf("%s: policy %q families %v, want %q %v", c.family, got, svc.Spec.IPFamilies, c.policy, c.families)
		}
	}
}

// TestClusterFamily: the nodes' pod CIDRs say whether a cluster is
// IPv4 only, dual-stack or IPv6 only; none say nothing.
func TestClusterFamily(t *testing.T) {
	withCIDRs := func(cidrs ...string) corev1.Node {
		var n corev1.Node
		n.Spec.PodCIDRs = cidrs
		if len(cidrs) > 0 {
			n.Spec.PodCIDR = cidrs[0]
		}
		return n
	}
	for _, c := range []struct {
		nodes []corev1.Node
		want  string
	}{
		{[]corev1.Node{withCIDRs("198.18.65.0/24"), withCIDRs("198.18.66.0/24")}, conditions.IPv4},
		{[]corev1.Node{withCIDRs("198.18.65.0/24", "2001:2:0:8101::/64")}, conditions.Dual},
		{[]corev1.Node{withCIDRs("2001:2:0:8101::/64")}, conditions.IPv6},
		{[]corev1.Node{withCIDRs()}, ""},
		{nil, ""},
	} {
		if got := clusterFamily(c.nodes); got != c.want {
			t.Errorf("%v: got %q, want %q", c.nodes, got, c.want)
		}
	}
	if pickFamily([]string{"", "198.18.16.10", "2001:2:0:8010::a"}, true) != "2001:2:0:8010::a" ||
		pickFamily([]string{"2001:2:0:8010::a"}, false) != "" {
		t.Error("pickFamily picks the wrong family")
	}
}

// TestNodeRecordKeepsBothInternalIPs: a dual-stack node's second
// InternalIP is recorded beside the first, not over it.
func TestNodeRecordKeepsBothInternalIPs(t *testing.T) {
	n := &corev1.Node{}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "198.18.0.2"},
		{Type: corev1.NodeInternalIP, Address: "2001:2::2"}, {Type: corev1.NodeHostName, Address: "node1"}}
	a := nodeRecord(n).Addresses
	if a["InternalIP"] != "198.18.0.2" || a["InternalIP/IPv6"] != "2001:2::2" || a["Hostname"] != "node1" {
		t.Fatalf("addresses %v", a)
	}
}

// TestCheckIPv6: a lab dialling IPv6 is refused in one line on a cluster
// whose nodes have no IPv6 pod CIDR and whose pods no IPv6 address, and
// let through on a dual-stack one.
func TestCheckIPv6(t *testing.T) {
	made := 0
	v4 := fakeAPI(t, "uid-v4", &made)
	dual := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/version" {
			fmt.Fprint(w, `{"major":"1","minor":"34","gitVersion":"v1.34.4"}`)
			return
		}
		if r.URL.Path != "/api/v1/nodes" {
			http.Error(w, "not in this test: "+r.URL.Path, http.StatusNotFound)
			return
		}
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"name":"node1"},"spec":{"podCIDR":"198.18.65.0/24","podCIDRs":["198.18.65.0/24","2001:2:0:8101::/64"]}}]}`)
	}))
	t.Cleanup(dual.Close)
	kc := kubeconfig(t, map[string]string{"v4": v4.URL, "dual": dual.URL})
	for _, c := range []struct {
		context, want string
	}{
		{"v4", "ip_family ipv6: cluster v4 is IPv4 only (its pods have no IPv6 address)"},
		{"dual", ""},
	} {
		cl, err := Connect(Target{Kubeconfig: kc, Context: c.context})
		if err != nil {
			t.Fatal(err)
		}
		err = checkIPv6(context.Background(), cl, "ip_family ipv6", c.context)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.context, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s: got %v, want %q", c.context, err, c.want)
		}
	}
	if made != 0 {
		t.Errorf("%d namespaces made", made)
	}
}
