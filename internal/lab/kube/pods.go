package kube

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Container is the name of the workload container in every pod.
const Container = "cnperf"

// podStartLimit bounds the wait for a pod to run; a pod whose image cannot
// be had says so sooner (stuckLimit).
const (
	podStartLimit = 2 * time.Minute
	stuckLimit    = time.Minute
)

// Build is the handle a mode builds with on this driver.
type Build struct {
	*lab.Build
	ctx    context.Context
	c      *Conn
	ns     string
	image  string
	policy corev1.PullPolicy
	nodes  map[string]string // lab host -> node
	labels map[string]string

	hostPods map[string]*record.KubePod // endpoint-less hosts' pods
	pods     []*record.KubePod
}

// Node is the node a lab host runs on.
func (b *Build) Node(host string) string { return b.nodes[host] }

// Placed is an endpoint's pod once it runs.
type Placed struct {
	lab.EndpointAt
	Pod *record.KubePod
}

// Pods makes a pod for every endpoint and for every host that carries
// none, on their hosts' nodes, on the nodes' network (hostNetwork) or the
// pod network, and waits until all run. It returns the endpoints' pods in
// b.Endpoints' order.
func (b *Build) Pods(hostNetwork bool) ([]Placed, error) {
	type want struct {
		name, host string
		at         int // index in b.Endpoints, -1 for a host's own pod
	}
	var wants []want
	withEndpoints := map[string]bool{}
	for i, e := range b.Endpoints {
		withEndpoints[e.Host.Name] = true
		wants = append(wants, want{podName(e.Host.Name, e.Role), e.Host.Name, i})
	}
	for _, h := range b.AllHosts {
		if !withEndpoints[h.Name] {
			wants = append(wants, want{podName(h.Name, "host"), h.Name, -1})
		}
	}
	for _, w := range wants {
		if err := b.createPod(w.name, b.nodes[w.host], hostNetwork); err != nil {
			return nil, err
		}
	}
	out := make([]Placed, len(b.Endpoints))
	b.hostPods = map[string]*record.KubePod{}
	errs := make([]error, len(wants))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, w := range wants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := b.waitRunning(w.name)
			if err != nil {
				errs[i] = err
				return
			}
			kp := &record.KubePod{Namespace: b.ns, Pod: w.name, Node: p.Spec.NodeName, PodIP: p.Status.PodIP,
				HostIP: p.Status.HostIP, HostNetwork: hostNetwork}
			if b.ipv6() {
				// The addresses peers dial are the pod's and its node's
				// IPv6 ones.
				kp.PodIP, kp.HostIP = podAddrs(p, true)
				if kp.PodIP == "" || kp.HostIP == "" {
					errs[i] = fmt.Errorf("kubernetes: pod %s on node %s has no IPv6 address (pod IPs %v, host IPs %v): ip_family %s needs a dual-stack cluster",
						w.name, p.Spec.NodeName, p.Status.PodIPs, p.Status.HostIPs, b.Conditions.Family())
					return
				}
			}
			mu.Lock()
			defer mu.Unlock()
			b.pods = append(b.pods, kp)
			if w.at < 0 {
				b.hostPods[w.host] = kp
				return
			}
			out[w.at] = Placed{EndpointAt: b.Endpoints[w.at], Pod: kp}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// podName is a pod's name: host and role as a DNS label.
func podName(host, role string) string {
	n := strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(host + "-" + role))
	if len(n) > 63 {
		n = strings.TrimRight(n[:63], "-")
	}
	return n
}

func (b *Build) createPod(name, node string, hostNetwork bool) error {
	labels := map[string]string{LabelPod: name}
	for k, v := range b.labels {
		labels[k] = v
	}
	grace, no := int64(1), false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.ns, Labels: labels},
		Spec: corev1.PodSpec{
			// The lab picks its nodes (placement is what it measures), so
			// the scheduler is not asked.
			NodeName:    node,
			HostNetwork: hostNetwork,
			Containers: []corev1.Container{{
				Name: Container, Image: b.image, ImagePullPolicy: b.policy,
				Command: []string{"/cnperf", "pod", "hold"},
			}},
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
		},
	}
	if hostNetwork {
		pod.Spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	if err := b.c.create(b.ctx, b.c.core, b.ns, "pods", pod, &corev1.Pod{}); err != nil {
		return fmt.Errorf("kubernetes: create pod %s on node %s: %w", name, node, err)
	}
	return nil
}

// stuckReasons are container states that will not get better by waiting.
var stuckReasons = []string{"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
	"CreateContainerConfigError", "CreateContainerError", "RunContainerError", "CrashLoopBackOff"}

// waitRunning waits until a pod runs. A pod whose container is stuck (its
// image cannot be pulled, or it cannot start) is reported after a minute at
// most, with the kubelet's reason, rather than waited on.
func (b *Build) waitRunning(name string) (*corev1.Pod, error) {
	start := time.Now()
	var stuckSince time.Time
	for {
		p := &corev1.Pod{}
		if err := b.c.get(b.ctx, b.c.core, b.ns, "pods", name, p); err != nil {
			return nil, fmt.Errorf("kubernetes: pod %s: %w", name, err)
		}
		switch p.Status.Phase {
		case corev1.PodRunning:
			if p.Status.PodIP != "" {
				return p, nil
			}
		case corev1.PodFailed, corev1.PodSucceeded:
			return nil, fmt.Errorf("kubernetes: pod %s on node %s ended (%s): %s", name, p.Spec.NodeName, p.Status.Phase, p.Status.Message)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && slices.Contains(stuckReasons, w.Reason) {
				if stuckSince.IsZero() {
					stuckSince = time.Now()
				}
				// A pull that fails once may be retried into success;
				// one that still fails after a while will not.
				if time.Since(stuckSince) > 15*time.Second || w.Reason == "ErrImageNeverPull" || w.Reason == "InvalidImageName" {
					return nil, fmt.Errorf("kubernetes: pod %s on node %s cannot start: %s: %s (image %s, pull policy %s)",
						name, p.Spec.NodeName, w.Reason, w.Message, b.image, b.policy)
				}
			}
		}
		// A pod the kubelet cannot start (its sandbox, a mount) stays
		// Pending with no container state that says so: its events do.
		if time.Since(start) > stuckLimit {
			if why := b.lastWarning(name); why != "" {
				return nil, fmt.Errorf("kubernetes: pod %s on node %s not running after %s: %s", name, p.Spec.NodeName,
					time.Since(start).Round(time.Second), why)
			}
		}
		if time.Since(start) > stuckLimit && !stuckSince.IsZero() || time.Since(start) > podStartLimit {
			return nil, fmt.Errorf("kubernetes: pod %s on node %s not running after %s (phase %s)", name, p.Spec.NodeName,
				time.Since(start).Round(time.Second), p.Status.Phase)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// lastWarning is the newest Warning event about a pod, as "REASON:
// message" ("" when there is none or events cannot be read).
func (b *Build) lastWarning(pod string) string {
	list := &corev1.EventList{}
	ctx, cancel := context.WithTimeout(b.ctx, apiTimeout)
	defer cancel()
	err := b.c.core.Get().Namespace(b.ns).Resource("events").
		VersionedParams(&metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod}, b.c.params).
		Do(ctx).Into(list)
	if err != nil {
		return ""
	}
	var last *corev1.Event
	for i := range list.Items {
		e := &list.Items[i]
		if e.Type != corev1.EventTypeWarning {
			continue
		}
		if last == nil || e.LastTimestamp.After(last.LastTimestamp.Time) {
			last = e
		}
	}
	if last == nil {
		return ""
	}
	msg := last.Message
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return last.Reason + ": " + msg
}

// Service puts a Service of type typ in front of an endpoint's pod, on
// every port of the lab as the endpoint uses it (shifted by shift); a
// NodePort Service uses the same numbers as node ports, so shift must put
// them in the cluster's node port range. It returns the Service.
func (b *Build) Service(p Placed, typ corev1.ServiceType, shift int) (*corev1.Service, error) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: p.Pod.Pod, Namespace: b.ns, Labels: b.labels},
		Spec:       corev1.ServiceSpec{Type: typ, Selector: map[string]string{LabelPod: p.Pod.Pod}},
	}
	if b.ipv6() {
		serviceFamilies(svc, b.Conditions.Family())
	}
	for _, port := range b.Publish {
		n := int32(port.Number + shift)
		sp := corev1.ServicePort{Name: fmt.Sprintf("%s-%d", port.Protocol, n), Protocol: corev1.Protocol(strings.ToUpper(port.Protocol)),
			Port: n, TargetPort: intstr.FromInt32(n)}
		if typ == corev1.ServiceTypeNodePort {
			sp.NodePort = n
		}
		svc.Spec.Ports = append(svc.Spec.Ports, sp)
	}
	got := &corev1.Service{}
	if err := b.c.create(b.ctx, b.c.core, b.ns, "services", svc, got); err != nil {
		return nil, fmt.Errorf("kubernetes: create %s service %s: %w", typ, svc.Name, err)
	}
	if b.ipv6() {
		// Peers dial the Service's IPv6 ClusterIP (Spec.ClusterIP is its
		// first family's, which the cluster may order otherwise).
		ip := pickFamily(append([]string{got.Spec.ClusterIP}, got.Spec.ClusterIPs...), true)
		if ip == "" {
			return nil, fmt.Errorf("kubernetes: service %s has no IPv6 ClusterIP (%v): ip_family %s needs a dual-stack cluster", got.Name, got.Spec.ClusterIPs, b.Conditions.Family())
		}
		got.Spec.ClusterIP = ip
	}
	return got, nil
}

// NodePortRange is Kubernetes' default node port range.
const (
	NodePortMin = 30000
	NodePortMax = 32767
)

// NodePortService is Service with NodePort, with the lab's ports moved
// into the node port range at a random place, tried again elsewhere when
// another Service holds one of them. It returns the Service and the shift
// it used on top of the endpoint's own.
func (b *Build) NodePortService(p Placed) (*corev1.Service, int, error) {
	lo, hi := b.Publish[0].Number, b.Publish[0].Number
	for _, port := range b.Publish {
		lo, hi = min(lo, port.Number), max(hi, port.Number)
	}
	span := hi - lo + 1 + p.Shift
	if span > NodePortMax-NodePortMin {
		return nil, 0, fmt.Errorf("kubernetes: the lab's ports span %d, more than the node port range", span)
	}
	var last error
	for range 10 {
		base := NodePortMin + rand.IntN(NodePortMax-NodePortMin-span)
		shift := base - lo
		svc, err := b.Service(p, corev1.ServiceTypeNodePort, p.Shift+shift)
		if err == nil {
			return svc, shift, nil
		}
		if !apierrors.IsInvalid(err) && !strings.Contains(err.Error(), "already allocated") {
			return nil, 0, err
		}
		last = err
	}
	return nil, 0, last
}

func (b *Build) allPods() []*record.KubePod { return b.pods }

func (b *Build) usedNodes() []string {
	var out []string
	for _, n := range b.nodes {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// pickNodes maps the lab's hosts to nodes: the named ones, or the Ready,
// schedulable, untainted ones, in name order. same-node puts every host on
// the first; cross-node gives hosts the nodes in turn, which needs two.
func pickNodes(ctx context.Context, c *Conn, named []string, placement string, topo lab.Topology) (map[string]string, error) {
	list := &corev1.NodeList{}
	if err := c.list(ctx, c.core, "", "nodes", list); err != nil {
		return nil, fmt.Errorf("kubernetes: list nodes: %w", err)
	}
	return assignNodes(list.Items, named, placement, topo)
}

// assignNodes is pickNodes on a list of nodes.
func assignNodes(items []corev1.Node, named []string, placement string, topo lab.Topology) (map[string]string, error) {
	var usable, all []string
	why := map[string]string{}
	for _, n := range items {
		all = append(all, n.Name)
		if reason := unusable(n); reason != "" {
			why[n.Name] = reason
			continue
		}
		usable = append(usable, n.Name)
	}
	slices.Sort(usable)
	nodes := usable
	if len(named) > 0 {
		nodes = nil
		for _, n := range named {
			if !slices.Contains(all, n) {
				return nil, fmt.Errorf("kubernetes: node %s: no such node (the cluster has %s)", n, strings.Join(all, ", "))
			}
			if r := why[n]; r != "" {
				return nil, fmt.Errorf("kubernetes: node %s: %s", n, r)
			}
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("kubernetes: no node is Ready, schedulable and untainted (%d nodes)", len(all))
	}
	if placement == conditions.CrossNode && len(nodes) < 2 {
		return nil, fmt.Errorf("kubernetes: %s needs two schedulable nodes; the cluster offers %d (%s)", placement, len(nodes), strings.Join(nodes, ", "))
	}
	out := map[string]string{}
	for i, h := range topo.Hosts {
		if placement == conditions.SameNode {
			out[h.Name] = nodes[0]
		} else {
			out[h.Name] = nodes[i%len(nodes)]
		}
	}
	return out, nil
}

// unusable says why pods should not go on a node ("" if they may).
func unusable(n corev1.Node) string {
	if n.Spec.Unschedulable {
		return "cordoned (unschedulable)"
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return "not Ready"
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return fmt.Sprintf("tainted %s:%s", t.Key, t.Effect)
		}
	}
	return ""
}

// Endpoint is the endpoint on a pod that peers dial at addr (an IP), its
// servers listening on every address at the lab's ports shifted by shift
// (its slot's and any the mode adds).
func (b *Build) Endpoint(p Placed, addr string, shift int, path ...string) lab.Endpoint {
	port := b.Port + shift
	return lab.Endpoint{Host: p.Host.Name, Role: p.Role, Container: true,
		Listen:   lab.HostPort(b.listenAll(), port),
		External: lab.HostPort(addr, port), Internal: lab.HostPort(addr, port),
		PortShift: shift, Kube: p.Pod, Path: path}
}

// listenAll is the address servers listen on: every IPv4 one, or with
// IPv6 dialled every address ("::", both families).
func (b *Build) listenAll() string {
	if b.ipv6() {
		return "::"
	}
	return "0.0.0.0"
}

// Span is how far apart two endpoints' ports must be to stay apart: the
// width of the lab's ports.
func (b *Build) Span() int {
	lo, hi := b.Publish[0].Number, b.Publish[0].Number
	for _, port := range b.Publish {
		lo, hi = min(lo, port.Number), max(hi, port.Number)
	}
	return hi - lo + 1
}

// EachPod makes the lab's pods (Pods) and returns, in b.Endpoints' order,
// the endpoint endpoint() makes of each: what every mode on this driver
// does, with its own way of being dialled.
func (b *Build) EachPod(hostNetwork bool, endpoint func(p Placed) (lab.Endpoint, error)) ([]lab.Endpoint, error) {
	placed, err := b.Pods(hostNetwork)
	if err != nil {
		return nil, err
	}
	eps := make([]lab.Endpoint, 0, len(placed))
	for _, p := range placed {
		ep, err := endpoint(p)
		if err != nil {
			return nil, err
		}
		eps = append(eps, ep)
	}
	return eps, nil
}
