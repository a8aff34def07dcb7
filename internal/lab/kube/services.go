package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
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
	"github.com/cnperf/cnperf/internal/record"
)

// LabelServices marks the Services the services condition makes: "filler"
// (the N that fill the cluster's table) or "probe" (one more, whose
// programming latency is measured).
const LabelServices = "cnperf.io/services"

// Services at scale: how many Services are created at once, how many go
// between two looks at errors, how many probe Services measure the
// programming latency, and how long one may take to be reached (a
// filler table settled, a probe programmed).
const (
	serviceWorkers    = 16
	serviceBatch      = 500
	programmingProbes = 30
	programmingBound  = 2 * time.Minute
	// serviceDial bounds each of the prober's dials: an address not yet
	// programmed may drop the SYN, and the next dial starts only when
	// this one gave up, so the bound is the measurement's resolution.
	serviceDial = 20 * time.Millisecond
	settleBound = 10 * time.Minute
)

// servicesPlan is what a lab's Prepare puts on the cluster: n fillers, and
// the programming probes when the run asks any lab for Services (so that
// the curve has its N = 0 point too).
type servicesPlan struct {
	n      int
	probe  bool
	port   int // the listener's port in the server pod, which every Service targets
	owner  string
	labels map[string]string
}

// batches splits n items into runs of at most size: [from, to) each.
func batches(n, size int) [][2]int {
	var out [][2]int
	for from := 0; from < n; from += size {
		out = append(out, [2]int{from, min(from+size, n)})
	}
	return out
}

// service is a ClusterIP Service in ns over pod's listener on port: a
// filler, or a probe at clusterIP ("" lets the cluster pick).
func service(ns, name, kind, pod string, port int, clusterIP string, labels map[string]string) *corev1.Service {
	l := map[string]string{LabelServices: kind}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l},
		Spec: corev1.ServiceSpec{Selector: map[string]string{LabelPod: pod}, ClusterIP: clusterIP,
			Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: int32(port), TargetPort: intstr.FromInt32(int32(port))}}},
	}
}

// Prepare fills the cluster with the lab's Services (topped up to N over
// what earlier labs of the run left on it), waits until a client pod
// reaches the last, measures the programming latency of one more Service
// many times, and counts the rules and map entries the nodes hold.
func (r *Runtime) Prepare(l *lab.Lab) error {
	p := r.svc
	if p == nil || (p.n == 0 && !p.probe) {
		return nil
	}
	ctx := context.Background()
	ks := &record.KubeServices{N: p.n, Batch: serviceWorkers, BoundNS: programmingBound}
	l.Kube.Services = ks
	server, client := probePods(l)
	if server == nil || client == nil {
		ks.Notes = append(ks.Notes, "the lab's pods are on the nodes' network: no client pod to probe the Services from")
	}
	meter, _ := r.DaemonMeter()
	var dBefore lab.DaemonSnapshot
	dErr := errors.New("no daemon meter")
	if meter != nil {
		dBefore, dErr = meter.Read()
	}
	// Cilium in kube-proxy's place: no kube-proxy to ask.
	noProxy := l.Kube.Cilium != nil && l.Kube.Cilium.KubeProxyReplacement == "true"
	syncsBefore, syncErr := r.proxySyncs(ctx)
	start := time.Now()

	var lis lab.Proc
	if server != nil && client != nil {
		var err error
		errb := &syncWriter{w: &strings.Builder{}}
		if lis, err = r.start(lab.Endpoint{Role: "services-listen", Kube: server.Kube},
			[]string{Exe, "pod", "listen", "--port", strconv.Itoa(p.port)}, io.Discard, errb); err != nil {
			return fmt.Errorf("kubernetes: services: listener in pod %s: %w", server.Kube.Pod, err)
		}
		defer func() { _ = lis.Stop(0) }()
	}
	pod := r.pods[0].Pod
	if server != nil {
		pod = server.Kube.Pod
	}
	last, err := r.fill(ctx, ks, pod)
	if err != nil {
		return err
	}
	if lis != nil {
		if last != "" {
			d, ok, err := r.settle(client, net.JoinHostPort(last, strconv.Itoa(p.port)), time.Now())
			if err != nil {
				return err
			}
			if ok {
				ks.SettleNS = d
			} else {
				ks.Notes = append(ks.Notes, fmt.Sprintf("the last filler Service %s was not reached within %s", last, settleBound))
			}
		}
		if p.probe {
			if err := r.programming(ctx, ks, server.Kube, client); err != nil {
				return err
			}
		}
	}
	ks.ClusterServices = r.countServices(ctx)
	ks.Nodes, err = r.nodeRules(ctx)
	if err != nil {
		ks.Notes = append(ks.Notes, err.Error())
	}
	if syncErr == nil {
		if after, err := r.proxySyncs(ctx); err == nil {
			ks.Syncs, ks.SyncSeconds = after.count-syncsBefore.count, after.sum-syncsBefore.sum
		}
	} else if !noProxy {
		ks.Notes = append(ks.Notes, "kube-proxy's sync durations: "+syncErr.Error())
	}
	if dErr == nil {
		if dAfter, err := meter.Read(); err == nil {
			ks.Daemons = lab.DaemonCosts(dBefore, dAfter, start, time.Now())
		}
	}
	return nil
}

// fill creates the fillers the cluster lacks for N (this run's, over all
// its labs' namespaces), in batches of concurrent requests, and returns
// the ClusterIP of the last one created ("" none).
func (r *Runtime) fill(ctx context.Context, ks *record.KubeServices, pod string) (string, error) {
	have, err := r.countFillers(ctx)
	if err != nil {
		return "", err
	}
	need := max(0, ks.N-have)
	var mu sync.Mutex
	var last string
	t0 := time.Now()
	for _, b := range batches(need, serviceBatch) {
		err := parallel(b[1]-b[0], func(k int) error {
			i := b[0] + k
			got := &corev1.Service{}
			name := fmt.Sprintf("cnperf-svc-%05d", i)
			if err := r.c.create(ctx, r.c.bulk, r.ns, "services", service(r.ns, name, "filler", pod, r.svc.port, "", r.svc.labels), got); err != nil {
				return fmt.Errorf("kubernetes: services %d: create Service %s in %s (%d of %d made): %w", ks.N, name, r.ns, i, need, err)
			}
			if i == need-1 {
				mu.Lock()
				last = got.Spec.ClusterIP
				mu.Unlock()
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	ks.Created, ks.CreateNS = need, time.Since(t0)
	return last, nil
}

// fillerSelector selects this run's fillers, on any of its labs.
func (r *Runtime) fillerSelector() string {
	return LabelServices + "=filler," + LabelOwner + "=" + r.svc.labels[LabelOwner]
}

// countFillers counts this run's fillers on the cluster, a page at a
// time, bounded: a count past what any lab asks is an error.
func (r *Runtime) countFillers(ctx context.Context) (int, error) {
	n, cont := 0, ""
	for page := 0; ; page++ {
		list := &corev1.ServiceList{}
		cctx, cancel := context.WithTimeout(ctx, apiTimeout)
		err := r.c.core.Get().Resource("services").Param("labelSelector", r.fillerSelector()).
			Param("limit", strconv.Itoa(serviceBatch)).Param("continue", cont).Do(cctx).Into(list)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("kubernetes: services: count the run's Services: %w", err)
		}
		n += len(list.Items)
		if cont = list.Continue; cont == "" {
			return n, nil
		}
		if page > 2*maxServicesPages {
			return 0, fmt.Errorf("kubernetes: services: more than %d pages of the run's Services", 2*maxServicesPages)
		}
	}
}

// maxServicesPages is the pages the largest services condition fills.
const maxServicesPages = 20000/serviceBatch + 1

// countServices is every Service on the cluster as the API server counts
// them (a one-item page and the count of the rest; 0 when it does not say).
func (r *Runtime) countServices(ctx context.Context) int {
	list := &corev1.ServiceList{}
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	if err := r.c.core.Get().Resource("services").Param("limit", "1").Do(cctx).Into(list); err != nil {
		return 0
	}
	n := len(list.Items)
	if list.RemainingItemCount != nil {
		n += int(*list.RemainingItemCount)
	}
	return n
}

// settle returns the time from since until a prober in pod client first
// connected to to (false after bound).
func (r *Runtime) settle(client *record.KubePod, to string, since time.Time) (time.Duration, bool, error) {
	s := newProbe(to)
	if err := s.startProber(r, client, "services", serviceDial); err != nil {
		return 0, false, err
	}
	defer s.stop()
	passed, ok := s.waitFor(inpod.ProbePass, time.Time{}, settleBound)
	return max(0, passed.Sub(since)), ok, nil
}

// errTaken says a probe's address answered before its Service existed.
var errTaken = errors.New("address taken")

// reach starts a prober in pod client dialling to, waits for its first
// dial (which must fail: else errTaken), calls create and returns the
// time from create's start until a dial that began after it passed (false
// after programmingBound).
func (r *Runtime) reach(client *record.KubePod, to string, create func() error) (time.Duration, bool, error) {
	s := newProbe(to)
	if err := s.startProber(r, client, "services", serviceDial); err != nil {
		return 0, false, err
	}
	defer s.stop()
	select {
	case l, ok := <-s.lines:
		if !ok {
			return 0, false, fmt.Errorf("kubernetes: services: the prober in pod %s dialling %s ended: %s", client.Pod, to, strings.TrimSpace(s.errb.String()))
		}
		if l.state == inpod.ProbePass {
			return 0, false, errTaken
		}
	case <-time.After(programmingBound):
		return 0, false, fmt.Errorf("kubernetes: services: the prober in pod %s dialling %s said nothing in %s", client.Pod, to, programmingBound)
	}
	t0 := time.Now()
	if err := create(); err != nil {
		return 0, false, err
	}
	passed, ok := s.waitFor(inpod.ProbePass, t0, programmingBound)
	return max(0, passed.Sub(t0)), ok, nil
}

// programming measures, programmingProbes times, the time from creating
// a Service at a free ClusterIP (picked from the cluster's ServiceCIDRs,
// so that the prober dials it before it exists) over the server pod's
// listener until the client pod's first connection to it passes; each
// probe Service is deleted after.
func (r *Runtime) programming(ctx context.Context, ks *record.KubeServices, server, client *record.KubePod) error {
	ranges, err := r.serviceRanges(ctx)
	if err != nil {
		ks.Notes = append(ks.Notes, "programming latency not measured: "+err.Error())
		return nil
	}
	ks.From, ks.To = client.Pod, server.Pod+":"+strconv.Itoa(r.svc.port)
	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 43))
	for i := 0; len(ks.ProgrammingNS)+ks.Failed < programmingProbes && i < 2*programmingProbes; i++ {
		name := fmt.Sprintf("cnperf-probe-%02d", i)
		ip := randomAddr(rnd, ranges)
		d, ok, err := r.reach(client, net.JoinHostPort(ip.String(), strconv.Itoa(r.svc.port)), func() error {
			return r.c.create(ctx, r.c.core, r.ns, "services", service(r.ns, name, "probe", server.Pod, r.svc.port, ip.String(), r.svc.labels), &corev1.Service{})
		})
		if errors.Is(err, errTaken) || apierrors.IsInvalid(err) || apierrors.IsAlreadyExists(err) {
			continue // the address was taken: the next probe picks another
		}
		if err != nil {
			return fmt.Errorf("kubernetes: services: probe Service %s at %s: %w", name, ip, err)
		}
		if ok {
			ks.ProgrammingNS = append(ks.ProgrammingNS, d)
		} else {
			ks.Failed++
		}
		if err := r.c.remove(ctx, r.c.core, r.ns, "services", name, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("kubernetes: services: delete probe Service %s: %w", name, err)
		}
	}
	return nil
}

// serviceRanges are the cluster's IPv4 Service ranges, from its
// ServiceCIDR objects (Kubernetes 1.33 and later).
func (r *Runtime) serviceRanges(ctx context.Context) ([]netip.Prefix, error) {
	list := &networkingv1.ServiceCIDRList{}
	if err := r.c.list(ctx, r.c.netw, "", "servicecidrs", list); err != nil {
		return nil, fmt.Errorf("the cluster's ServiceCIDRs, to pick a free ClusterIP from, cannot be read: %w", err)
	}
	var out []netip.Prefix
	for _, sc := range list.Items {
		for _, c := range sc.Spec.CIDRs {
			if p, err := netip.ParsePrefix(c); err == nil && p.Addr().Is4() && p.Bits() <= 28 {
				out = append(out, p.Masked())
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the cluster has no IPv4 ServiceCIDR of 16 addresses or more")
	}
	return out, nil
}

// randomAddr is an address of one of ranges, neither its first nor its
// last (taken by the range's network and, on the first range, the
// kubernetes Service).
func randomAddr(rnd *rand.Rand, ranges []netip.Prefix) netip.Addr {
	p := ranges[rnd.IntN(len(ranges))]
	size := uint32(1) << (32 - p.Bits())
	b := p.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += 2 + rnd.Uint32N(size-3)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// deleteServices deletes a lab's Services of the condition in batches of
// concurrent requests before its namespace goes: the namespace's own
// deletion of tens of thousands would outlast its wait.
func deleteServices(ctx context.Context, c *Conn, ns string) error {
	for range 2*maxServicesPages + 1 {
		list := &corev1.ServiceList{}
		cctx, cancel := context.WithTimeout(ctx, apiTimeout)
		err := c.core.Get().Namespace(ns).Resource("services").Param("labelSelector", LabelServices).
			Param("limit", strconv.Itoa(serviceBatch)).Do(cctx).Into(list)
		cancel()
		if err != nil {
			return fmt.Errorf("kubernetes: list the Services of %s: %w", ns, err)
		}
		if len(list.Items) == 0 {
			return nil
		}
		err = parallel(len(list.Items), func(i int) error {
			name := list.Items[i].Name
			if err := c.remove(ctx, c.bulk, ns, "services", name, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("kubernetes: delete Service %s in %s: %w", name, ns, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return fmt.Errorf("kubernetes: Services of %s still listed after deleting %d pages", ns, 2*maxServicesPages+1)
}

// parallel calls do for 0..n-1, serviceWorkers at a time, and returns
// the first error once all have returned.
func parallel(n int, do func(i int) error) error {
	work := make(chan int)
	errs := make(chan error, serviceWorkers)
	for range serviceWorkers {
		go func() {
			var first error
			for i := range work {
				if err := do(i); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	var first error
	for range serviceWorkers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
