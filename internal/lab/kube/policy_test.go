package kube

import (
	"net/netip"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
)

// matches says whether an ingress rule admits a TCP connection from addr
// (a pod of the lab when lab is set) to port, as a CNI reads it.
func matches(r networkingv1.NetworkPolicyIngressRule, addr netip.Addr, fromLab bool, labName string, proto corev1.Protocol, port int) bool {
	peer := false
	for _, p := range r.From {
		if p.PodSelector != nil && fromLab && p.PodSelector.MatchLabels[LabelLab] == labName {
			peer = true
		}
		if p.IPBlock != nil && netip.MustParsePrefix(p.IPBlock.CIDR).Contains(addr) {
			peer = true
		}
	}
	if !peer {
		return false
	}
	for _, p := range r.Ports {
		lo := int(p.Port.IntVal)
		hi := lo
		if p.EndPort != nil {
			hi = int(*p.EndPort)
		}
		if *p.Protocol == proto && port >= lo && port <= hi {
			return true
		}
	}
	return false
}

// TestAllowPolicyHasOneMatchingRule: a policy of N rules has N ingress
// rules, each on every port of the lab; exactly one admits the lab's
// clients (pods, and the nodes for host-network clients), and it is the
// last; no decoy takes an address the lab uses.
func TestAllowPolicyHasOneMatchingRule(t *testing.T) {
	client := netip.MustParseAddr("198.18.64.7")
	node := netip.MustParseAddr("198.18.0.2")
	podNet := netip.MustParsePrefix("198.18.64.0/18")
	// An address a decoy would otherwise take: the lab holds it.
	held := netip.MustParseAddr("198.18.32.1")
	avoid := func(a netip.Addr) bool { return a == held || a == node || podNet.Contains(a) }
	ports := policyPorts([]record.Port{{Number: 8080, Protocol: "tcp"}, {Number: 8081, Protocol: "tcp"}, {Number: 9000, Protocol: "udp"}}, []int{0, 2})
	for _, n := range []int{1, 10, 100, 1000} {
		np, err := allowPolicy("cnperf-l1", "l1", map[string]string{LabelManaged: managedBy}, n, ports, []netip.Addr{node}, avoid)
		if err != nil {
			t.Fatalf("%d rules: %v", n, err)
		}
		if len(np.Spec.Ingress) != n {
			t.Fatalf("%d rules: policy has %d", n, len(np.Spec.Ingress))
		}
		if np.Spec.PodSelector.MatchLabels[LabelLab] != "l1" || len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
			t.Errorf("%d rules: selects %v, types %v; want the lab's pods, ingress", n, np.Spec.PodSelector.MatchLabels, np.Spec.PolicyTypes)
		}
		seen := map[string]bool{}
		for i, r := range np.Spec.Ingress {
			for _, probe := range []struct {
				addr    netip.Addr
				fromLab bool
				proto   corev1.Protocol
				port    int
			}{{client, true, corev1.ProtocolTCP, 8080}, {client, true, corev1.ProtocolTCP, 8083}, {client, true, corev1.ProtocolUDP, 9002},
				{node, false, corev1.ProtocolTCP, 8082}} {
				got := matches(r, probe.addr, probe.fromLab, "l1", probe.proto, probe.port)
				if want := i == n-1; got != want {
					t.Errorf("%d rules: rule %d admits %s %s/%d: %v, want %v", n, i, probe.addr, probe.proto, probe.port, got, want)
				}
			}
			if matches(r, client, true, "l1", corev1.ProtocolTCP, 8084) {
				t.Errorf("%d rules: rule %d admits port 8084, which the lab does not use", n, i)
			}
			if i == n-1 {
				continue
			}
			cidr := r.From[0].IPBlock.CIDR
			a := netip.MustParsePrefix(cidr).Addr()
			if seen[cidr] || avoid(a) || !lab198.Contains(a) {
				t.Errorf("%d rules: decoy %d is %s (repeated, held by the lab, or outside 198.18.0.0/15)", n, i, cidr)
			}
			seen[cidr] = true
		}
	}
}

func TestPolicyPorts(t *testing.T) {
	ports := policyPorts([]record.Port{{Number: 8080, Protocol: "tcp"}, {Number: 8081, Protocol: "tcp"}, {Number: 5201, Protocol: "udp"}}, []int{0, 10})
	var got []string
	for _, p := range ports {
		s := string(*p.Protocol) + "/" + p.Port.String()
		if p.EndPort != nil {
			s += "-" + strconv.Itoa(int(*p.EndPort))
		}
		got = append(got, s)
	}
	want := []string{"TCP/8080-8081", "TCP/8090-8091", "UDP/5201", "UDP/5211"}
	if len(got) != len(want) {
		t.Fatalf("ports %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ports %v, want %v", got, want)
			break
		}
	}
}

func TestAllowPolicyRefuses(t *testing.T) {
	ports := policyPorts([]record.Port{{Number: 80, Protocol: "tcp"}}, []int{0})
	never := func(netip.Addr) bool { return false }
	if _, err := allowPolicy("ns", "l", nil, 0, ports, nil, never); err == nil {
		t.Error("0 rules: no error")
	}
	if _, err := allowPolicy("ns", "l", nil, 3, nil, nil, never); err == nil {
		t.Error("no ports: no error")
	}
	// A lab range with every address held has no room for decoys.
	if _, err := allowPolicy("ns", "l", nil, 3, ports, nil, func(netip.Addr) bool { return true }); err == nil {
		t.Error("no decoy address left: no error")
	}
}

func TestDenyPolicySelectsOnePodAndAllowsNothing(t *testing.T) {
	np := denyPolicy("ns", "s-server", nil)
	if np.Spec.PodSelector.MatchLabels[LabelPod] != "s-server" || len(np.Spec.Ingress) != 0 ||
		len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
		t.Errorf("deny policy %+v", np.Spec)
	}
}

func TestClosedPort(t *testing.T) {
	ports := policyPorts([]record.Port{{Number: 8080, Protocol: "tcp"}, {Number: 8081, Protocol: "tcp"}, {Number: 8082, Protocol: "udp"}}, []int{0})
	for _, tc := range []struct{ from, want int }{{8080, 8082}, {8000, 8000}, {65535, 65535}} {
		if got := closedPort(ports, tc.from); got != tc.want {
			t.Errorf("closedPort from %d = %d, want %d", tc.from, got, tc.want)
		}
	}
	all := policyPorts([]record.Port{{Number: 65534, Protocol: "tcp"}, {Number: 65535, Protocol: "tcp"}}, []int{0})
	if got := closedPort(all, 65534); got != 0 {
		t.Errorf("closedPort with every port from 65534 allowed = %d, want 0", got)
	}
}

// TestProbePods: the probe dials the lab's server (its last endpoint on
// the pod network) from another pod, on another node when there is one,
// and a lab all on the nodes' network is not probed.
func TestProbePods(t *testing.T) {
	pod := func(name, node string, host bool) *record.KubePod {
		return &record.KubePod{Pod: name, Node: node, HostNetwork: host}
	}
	l := &lab.Lab{}
	l.Endpoints = []lab.Endpoint{{Role: "client", Kube: pod("c", "n1", false)}, {Role: "server", Kube: pod("s", "n2", false)}}
	l.Hosts = []lab.Host{{Name: "siege", Kube: pod("siege", "n2", false)}}
	server, client := probePods(l)
	if server == nil || server.Role != "server" || client == nil || client.Pod != "c" {
		t.Errorf("probe %v from %v, want server from c (on the other node)", server, client)
	}
	l.Endpoints[0].Kube.Node = "n2"
	l.Hosts[0].Kube.Node = "n1"
	if _, client := probePods(l); client == nil || client.Pod != "siege" {
		t.Errorf("probe from %v, want from siege, the pod on another node", client)
	}
	for _, e := range l.Endpoints {
		e.Kube.HostNetwork = true
	}
	l.Hosts[0].Kube.HostNetwork = true
	if server, client := probePods(l); server != nil || client != nil {
		t.Errorf("host network: probe %v from %v, want none", server, client)
	}
}
