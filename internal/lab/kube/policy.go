package kube

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/kube/inpod"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/record"
)

// Enforcement probing: how often the client pod dials, how long a dial may
// take before it counts as blocked (a dropped SYN shows only as a
// timeout; the time the driver measures is the failing dial's start, so
// the timeout does not add to it), and how long the prober may take to
// reach the listener, and a policy to be enforced (unless
// kubernetes.policy_probe_seconds says: Target.policyBound) before the CNI
// is said not to enforce policies.
const (
	probeEvery   = 10 * time.Millisecond
	probeTimeout = 200 * time.Millisecond
	probeBound   = 30 * time.Second
)

// policyBound is how long a policy's creation or deletion may take to
// show on the prober's dials.
func (t Target) policyBound() time.Duration {
	return cmp.Or(time.Duration(t.PolicyProbeSeconds)*time.Second, probeBound)
}

// Names of the policies a lab makes.
const (
	policyName = "cnperf-allow"
	denyName   = "cnperf-probe-deny"
)

// decoyBase is where the non-matching rules' addresses start: /32s of the
// lab range (198.18.0.0/15), each skipped when a lab pod, node or pod
// network holds it, so that exactly one rule matches the clients.
var decoyBase = netip.MustParseAddr("198.18.32.0")

// allowPolicy is the lab's NetworkPolicy: over every pod of lab labName,
// rules ingress rules on the lab's ports. rules-1 of them each allow one
// address that no client has; the last allows the lab's own pods and the
// nodes (host-network clients, and Services that masquerade), so that an
// evaluator walking rules in order passes all the others first. avoid
// says which addresses a decoy must not take.
func allowPolicy(ns, labName string, labels map[string]string, rules int, ports []networkingv1.NetworkPolicyPort,
	nodes []netip.Addr, avoid func(netip.Addr) bool) (*networkingv1.NetworkPolicy, error) {
	if rules < 1 {
		return nil, fmt.Errorf("kubernetes: policy of %d rules", rules)
	}
	if len(ports) == 0 {
		return nil, errors.New("kubernetes: policy: the lab has no ports to allow")
	}
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName, Namespace: ns, Labels: labels},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelLab: labName}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
	a := decoyBase
	for range rules - 1 {
		for lab198.Contains(a) && avoid(a) {
			a = a.Next()
		}
		if !a.IsValid() || !lab198.Contains(a) {
			return nil, errors.New("kubernetes: policy: the lab range has no address left for a decoy rule")
		}
		np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
			From:  []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: a.String() + "/32"}}},
			Ports: ports,
		})
		a = a.Next()
	}
	match := networkingv1.NetworkPolicyIngressRule{
		From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelLab: labName}}}},
		Ports: ports,
	}
	for _, n := range nodes {
		match.From = append(match.From, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: netip.PrefixFrom(n, n.BitLen()).String()}})
	}
	np.Spec.Ingress = append(np.Spec.Ingress, match)
	return np, nil
}

var lab198 = netip.MustParsePrefix("198.18.0.0/15")

// policyPorts are the ports the lab's servers listen on: every published
// port (the workload's TCP port, its UDP ones, other servers') at every
// endpoint's shift, with consecutive numbers of a protocol as one range.
func policyPorts(publish []record.Port, shifts []int) []networkingv1.NetworkPolicyPort {
	byProto := map[string][]int{}
	for _, p := range publish {
		for _, s := range shifts {
			n := p.Number + s
			if !slices.Contains(byProto[p.Protocol], n) {
				byProto[p.Protocol] = append(byProto[p.Protocol], n)
			}
		}
	}
	var out []networkingv1.NetworkPolicyPort
	for _, proto := range []string{"tcp", "udp"} {
		ns := byProto[proto]
		slices.Sort(ns)
		for i := 0; i < len(ns); {
			j := i
			for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
				j++
			}
			pr := corev1.Protocol(strings.ToUpper(proto))
			port := intstr.FromInt32(int32(ns[i]))
			np := networkingv1.NetworkPolicyPort{Protocol: &pr, Port: &port}
			if j > i {
				end := int32(ns[j])
				np.EndPort = &end
			}
			out = append(out, np)
			i = j + 1
		}
	}
	return out
}

// labPorts are the ports the lab's servers listen on (policyPorts), at
// every endpoint's shift.
func labPorts(l *lab.Lab, cfg lab.Config) []networkingv1.NetworkPolicyPort {
	var shifts []int
	for _, e := range l.Endpoints {
		if !slices.Contains(shifts, e.PortShift) {
			shifts = append(shifts, e.PortShift)
		}
	}
	if len(shifts) == 0 {
		shifts = []int{0}
	}
	return policyPorts(append([]record.Port{{Number: cfg.Port, Protocol: "tcp"}}, cfg.Publish...), shifts)
}

// denyPolicy isolates one pod for ingress and allows nothing.
func denyPolicy(ns, pod string, labels map[string]string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: denyName, Namespace: ns, Labels: labels},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelPod: pod}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}

// applyPolicy probes whether the cluster enforces a deny policy on the
// lab's pods, and how fast (before the lab's own policy exists: policies
// add up, so its allow rule would hide the deny), then creates the lab's
// policy, if its conditions ask for one.
func applyPolicy(ctx context.Context, l *lab.Lab, cfg lab.Config, rt *Runtime, labels map[string]string) error {
	on, rules := cfg.Conditions.Policy()
	var nodes []netip.Addr
	taken := map[netip.Addr]bool{}
	var nets []netip.Prefix
	for _, n := range l.Kube.Nodes {
		for _, a := range n.Addresses {
			if ip, err := netip.ParseAddr(a); err == nil {
				taken[ip] = true
				if !slices.Contains(nodes, ip) {
					nodes = append(nodes, ip)
				}
			}
		}
		for _, c := range n.PodCIDRs {
			if p, err := netip.ParsePrefix(c); err == nil {
				nets = append(nets, p)
			}
		}
	}
	for _, p := range rt.pods {
		for _, a := range []string{p.PodIP, p.HostIP} {
			if ip, err := netip.ParseAddr(a); err == nil {
				taken[ip] = true
			}
		}
	}
	slices.SortFunc(nodes, func(a, b netip.Addr) int { return a.Compare(b) })
	avoid := func(a netip.Addr) bool {
		return taken[a] || slices.ContainsFunc(nets, func(p netip.Prefix) bool { return p.Contains(a) })
	}
	ports := labPorts(l, cfg)
	var np *networkingv1.NetworkPolicy
	if on {
		var err error
		if np, err = allowPolicy(rt.ns, cfg.Name, labels, rules, ports, nodes, avoid); err != nil {
			return err
		}
	}

	server, client := probePods(l)
	if server == nil || client == nil {
		l.Kube.PolicyProbe = &record.PolicyProbe{Note: "the lab's pods are on the nodes' network, where NetworkPolicies do not apply: not probed"}
	} else {
		pr, err := probeEnforcement(ctx, rt, server.Kube, client, cfg.Port+server.PortShift, labels, options(cfg).policyBound())
		if err != nil {
			return err
		}
		l.Kube.PolicyProbe = &pr
	}
	if !on {
		return nil
	}
	create := func() error {
		if err := rt.c.create(ctx, rt.c.netw, rt.ns, "networkpolicies", np, &networkingv1.NetworkPolicy{}); err != nil {
			return fmt.Errorf("kubernetes: create network policy %s of %d rules in %s: %w", policyName, rules, rt.ns, err)
		}
		return nil
	}
	l.Kube.Policy, l.Kube.PolicyRules = "allow", rules
	pr := l.Kube.PolicyProbe
	closed := closedPort(ports, cfg.Port+server.PortShift)
	if !pr.Enforced || closed == 0 {
		return create()
	}
	// The cells start once the policy is in force: a port it does not
	// allow is refused.
	took, ok, err := probeApply(rt, server.Kube, client, closed, create, pr.Bound)
	if err != nil {
		return err
	}
	if !ok {
		pr.Note = fmt.Sprintf("the lab's policy left port %d, which it does not allow, passing for %s", closed, pr.Bound)
		return nil
	}
	pr.Apply = took
	return nil
}

// probePods picks the probe's server (the last endpoint on the pod
// network: a socket test's server, ping-pong's pong) and client (another
// pod of the lab on the pod network, preferably on another node, as the
// workload's clients are).
func probePods(l *lab.Lab) (*lab.Endpoint, *record.KubePod) {
	var server *lab.Endpoint
	for i := len(l.Endpoints) - 1; i >= 0; i-- {
		if k := l.Endpoints[i].Kube; k != nil && !k.HostNetwork {
			server = &l.Endpoints[i]
			break
		}
	}
	if server == nil {
		return nil, nil
	}
	var client *record.KubePod
	consider := func(k *record.KubePod) {
		if k == nil || k.HostNetwork || k.Pod == server.Kube.Pod {
			return
		}
		if client == nil || (client.Node == server.Kube.Node && k.Node != server.Kube.Node) {
			client = k
		}
	}
	for _, e := range l.Endpoints {
		consider(e.Kube)
	}
	for _, h := range l.Hosts {
		consider(h.Kube)
	}
	return server, client
}

// probeSession is a listener in a server pod and a prober dialling it from
// a client pod, whose state changes arrive on lines.
type probeSession struct {
	to    string
	lines chan probeLine
	done  chan struct{}
	errb  *syncWriter
	stop  func()
	// passed is when the first dial that passed began.
	passed time.Time
}

// probeLine is one change of the probe's state and when the dial that
// found it began, on this machine's clock.
type probeLine struct {
	state string
	at    time.Time
}

// startProbe starts a listener on port in pod server and a prober in pod
// client, and waits until a dial passes.
func startProbe(rt *Runtime, server, client *record.KubePod, port int) (*probeSession, error) {
	s := newProbe(net.JoinHostPort(server.PodIP, strconv.Itoa(port)))
	lis, err := rt.start(lab.Endpoint{Role: "policy-listen", Kube: server},
		[]string{Exe, "pod", "listen", "--port", strconv.Itoa(port)}, io.Discard, s.errb)
	if err != nil {
		return nil, lab.Failure{Err: fmt.Errorf("kubernetes: policy probe: listener in pod %s: %w", server.Pod, err)}
	}
	if err := s.startProber(rt, client, "policy probe", probeTimeout); err != nil {
		_ = lis.Stop(0)
		return nil, err
	}
	stop := s.stop
	s.stop = func() { stop(); _ = lis.Stop(0) }
	var ok bool
	if s.passed, ok = s.waitFor(inpod.ProbePass, time.Time{}, probeBound); !ok {
		s.stop()
		return nil, lab.Failure{Err: fmt.Errorf("kubernetes: policy probe: pod %s cannot reach %s (pod %s) in %s: %s",
			client.Pod, s.to, server.Pod, probeBound, strings.TrimSpace(s.errb.String()))}
	}
	return s, nil
}

// newProbe is a session dialling to, its prober not yet started.
func newProbe(to string) *probeSession {
	return &probeSession{to: to, lines: make(chan probeLine, 16), done: make(chan struct{}), errb: &syncWriter{w: &strings.Builder{}}}
}

// startProber starts the session's prober in pod client, each dial
// bounded by timeout; s.stop ends it.
func (s *probeSession) startProber(rt *Runtime, client *record.KubePod, what string, timeout time.Duration) error {
	pr, pw := io.Pipe()
	probe, err := rt.start(lab.Endpoint{Role: "probe", Kube: client},
		[]string{Exe, "pod", "probe", "--addr", s.to, "--every", probeEvery.String(), "--timeout", timeout.String()}, pw, s.errb)
	if err != nil {
		return lab.Failure{Err: fmt.Errorf("kubernetes: %s: prober in pod %s: %w", what, client.Pod, err)}
	}
	// The reader stops with the session, so the prober's stream never
	// blocks on a line nobody reads.
	s.stop = func() { close(s.done); _ = probe.Stop(0); pw.Close() }
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			now := time.Now()
			state, ago, err := inpod.ParseProbe(sc.Text())
			if err != nil {
				continue
			}
			select {
			case s.lines <- probeLine{state, now.Add(-ago)}:
			case <-s.done:
				_, _ = io.Copy(io.Discard, pr)
				return
			}
		}
	}()
	return nil
}

// waitFor returns when the first dial that began after since found state
// began, or false after bound. (A dial that began before a policy's
// request cannot have met it: such a block is a flap, a dial slower than
// probeTimeout.)
func (s *probeSession) waitFor(state string, since time.Time, bound time.Duration) (time.Time, bool) {
	deadline := time.After(bound)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				return time.Time{}, false
			}
			if l.state == state && !l.at.Before(since) {
				return l.at, true
			}
		case <-deadline:
			return time.Time{}, false
		}
	}
}

// probeEnforcement measures, from pod client dialling pod server's port,
// the time from a deny-all-ingress policy's creation on the server until
// a dial fails, and from its deletion until one passes again. A deny that
// still passes after bound is not enforced: said, not an error.
func probeEnforcement(ctx context.Context, rt *Runtime, server, client *record.KubePod, port int, labels map[string]string, bound time.Duration) (record.PolicyProbe, error) {
	out := record.PolicyProbe{Every: probeEvery, Bound: bound, From: client.Pod, To: server.Pod + ":" + strconv.Itoa(port)}
	s, err := startProbe(rt, server, client, port)
	if err != nil {
		return out, err
	}
	defer s.stop()
	t0 := time.Now()
	if err := rt.c.create(ctx, rt.c.netw, rt.ns, "networkpolicies", denyPolicy(rt.ns, server.Pod, labels), &networkingv1.NetworkPolicy{}); err != nil {
		return out, lab.Failure{Err: fmt.Errorf("kubernetes: policy probe: create deny policy in %s: %w", rt.ns, err)}
	}
	blocked, enforced := s.waitFor(inpod.ProbeBlock, t0, bound)
	t1 := time.Now()
	if err := rt.c.remove(ctx, rt.c.netw, rt.ns, "networkpolicies", denyName, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return out, lab.Failure{Err: fmt.Errorf("kubernetes: policy probe: delete deny policy in %s: %w", rt.ns, err)}
	}
	if !enforced {
		out.Note = fmt.Sprintf("a deny-all-ingress policy left %s passing for %s", s.to, bound)
		return out, nil
	}
	out.Enforced, out.Deny = true, max(0, blocked.Sub(t0))
	passed, ok := s.waitFor(inpod.ProbePass, time.Time{}, bound)
	if !ok {
		return out, lab.Failure{Err: fmt.Errorf("kubernetes: policy probe: %s still blocked %s after the deny policy was deleted", s.to, bound)}
	}
	out.Undeny = max(0, passed.Sub(t1))
	return out, nil
}

// probeApply creates the lab's policy (create) while a prober dials a port
// of the server pod that the policy does not allow, and returns the time
// from the create request until a dial failed: the policy in force, so
// the cells measure under it (false after bound).
func probeApply(rt *Runtime, server, client *record.KubePod, closed int, create func() error, bound time.Duration) (time.Duration, bool, error) {
	s, err := startProbe(rt, server, client, closed)
	if err != nil {
		return 0, false, err
	}
	defer s.stop()
	t0 := time.Now()
	if err := create(); err != nil {
		return 0, false, err
	}
	blocked, ok := s.waitFor(inpod.ProbeBlock, t0, bound)
	if !ok {
		return 0, false, nil
	}
	return max(0, blocked.Sub(t0)), true, nil
}

// closedPort is a TCP port from from up that none of ports allows (0 when
// there is none).
func closedPort(ports []networkingv1.NetworkPolicyPort, from int) int {
	for p := max(from, 1); p <= 65535; p++ {
		if !slices.ContainsFunc(ports, func(np networkingv1.NetworkPolicyPort) bool {
			lo := int(np.Port.IntVal)
			hi := lo
			if np.EndPort != nil {
				hi = int(*np.EndPort)
			}
			return *np.Protocol == corev1.ProtocolTCP && p >= lo && p <= hi
		}) {
			return p
		}
	}
	return 0
}

// syncWriter lets a stream's copier and a reader share a builder.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// PolicyCheck is the preflight of a run whose labs ask for a NetworkPolicy:
// in a throwaway namespace, two pods on the pod network, a listener, a
// prober and a deny policy, so that a cluster whose pod network does not
// enforce policies is found by probing before any lab is built. The
// namespace goes whatever happens. It returns the probe's result; an
// error only when the probe could not be made.
func PolicyCheck(ctx context.Context, c *Conn, t Target, placement string) (record.PolicyProbe, error) {
	var none record.PolicyProbe
	if t.Image == "" {
		return none, errors.New("network_policy: probing the cluster's enforcement needs the workload image: give --image (`cnperf image save` writes one)")
	}
	two := lab.Topology{Hosts: []lab.HostSpec{{Name: "server"}, {Name: "client"}}}
	nodes, err := pickNodes(ctx, c, t.Nodes, placement, two)
	if err != nil {
		return none, err
	}
	id, _ := owner.Self()
	host, _ := os.Hostname()
	name := fmt.Sprintf("policycheck%d", os.Getpid())
	ns := Namespace(name)
	labels := map[string]string{LabelManaged: managedBy, LabelLab: name, LabelMode: "policy-check",
		LabelOwner: strings.ReplaceAll(id.String(), " ", "_"), LabelOwnerHost: labelValue(host)}
	if err := c.create(ctx, c.core, "", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}},
		&corev1.Namespace{}); err != nil {
		return none, fmt.Errorf("kubernetes: policy check: create namespace %s: %w", ns, err)
	}
	defer func() {
		if derr := deleteNamespace(context.Background(), c, ns, name); derr != nil {
			fmt.Fprintf(os.Stderr, "cnperf: policy check: %v\n", derr)
		}
	}()
	policy := corev1.PullPolicy(t.PullPolicy)
	if policy == "" {
		policy = corev1.PullIfNotPresent
	}
	b := &Build{ctx: ctx, c: c, ns: ns, image: t.Image, policy: policy, nodes: nodes, labels: labels}
	var pods []*record.KubePod
	for _, h := range []string{"server", "client"} {
		if err := b.createPod(h, nodes[h], false); err != nil {
			return none, err
		}
	}
	for _, h := range []string{"server", "client"} {
		p, err := b.waitRunning(h)
		if err != nil {
			return none, err
		}
		pods = append(pods, &record.KubePod{Namespace: ns, Pod: h, Node: p.Spec.NodeName, PodIP: p.Status.PodIP, HostIP: p.Status.HostIP})
	}
	rt := &Runtime{c: c, ns: ns, pods: pods}
	return probeEnforcement(ctx, rt, pods[0], pods[1], policyCheckPort, labels, t.policyBound())
}

// policyCheckPort is the port the policy check's listener takes in its own
// pod (nothing else runs there).
const policyCheckPort = 8080
