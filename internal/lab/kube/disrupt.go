package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/testcluster/daemons"
)

// disruption is one of a spec's disruptions as a lab carries it out.
type disruption struct {
	conditions.Disruption
	daemon string // what runs: flanneld, cilium-agent, kube-proxy, ...
	host   string // the lab host of the node (the test cluster's nodeI)
	node   string // the node's name
}

// role is the daemon's name in the test cluster's records.
func (d disruption) role() string { return d.host + "-" + d.daemon }

// readyWithin bounds the wait for a restarted daemon to do its job again:
// a Cilium agent compiles its datapath again on a busy machine.
const readyWithin = 5 * time.Minute

// ownCluster is a cnperf test cluster of this machine's: its name and
// directory, the flags it was brought up with, each node's lab host.
type ownCluster struct {
	name, dir    string
	flags, hosts map[string]string
}

// testCluster is the cnperf test cluster of this machine whose nodes c
// lists (every one labelled with its name, the cluster's records here).
// Any other cluster is refused: cnperf restarts only daemons it started.
func testCluster(ctx context.Context, c *Conn) (ownCluster, error) {
	list := &corev1.NodeList{}
	if err := c.list(ctx, c.core, "", "nodes", list); err != nil {
		return ownCluster{}, fmt.Errorf("disrupt: list the cluster's nodes: %w", err)
	}
	notOurs := fmt.Errorf("disrupt: the cluster at %s is not a test cluster cnperf brought up on this machine (cnperf cluster up): cnperf does not restart others' daemons", c.Server)
	oc := ownCluster{flags: map[string]string{}, hosts: map[string]string{}}
	for _, n := range list.Items {
		cl, h := n.Labels[LabelCluster], n.Labels[LabelHost]
		if cl == "" || h == "" || (oc.name != "" && cl != oc.name) {
			return oc, notOurs
		}
		oc.name, oc.hosts[n.Name] = cl, h
	}
	oc.dir = lab.StatePath(oc.name, "cluster")
	b, err := os.ReadFile(filepath.Join(oc.dir, "flags"))
	if oc.name == "" || err != nil {
		return oc, notOurs
	}
	for _, l := range strings.Fields(string(b)) {
		if k, v, ok := strings.Cut(l, "="); ok {
			oc.flags[k] = v
		}
	}
	return oc, nil
}

// daemonOf is the daemon that plays disrupt[i]'s component on the
// cluster, or why it runs none.
func (oc ownCluster) daemonOf(i int, d conditions.Disruption) (string, error) {
	cni := oc.flags["cni"]
	switch {
	case d.Component == conditions.ComponentCNIAgent && strings.HasPrefix(cni, "flannel-"):
		return "flanneld", nil
	case d.Component == conditions.ComponentCNIAgent && strings.HasPrefix(cni, "cilium-"):
		return "cilium-agent", nil
	case d.Component == conditions.ComponentCNIAgent:
		return "", fmt.Errorf("disrupt[%d].component cni-agent: test cluster %s's CNI %s runs no agent", i, oc.name, cni)
	case d.Component == "kube-proxy" && oc.flags["kube-proxy"] == "none":
		return "", fmt.Errorf("disrupt[%d].component kube-proxy: test cluster %s runs none (--kube-proxy none)", i, oc.name)
	}
	return d.Component, nil
}

// checkDisrupt refuses, before any lab, disruptions on a cluster that is
// not a test cluster of this machine's, or of a component it does not
// run.
func checkDisrupt(ctx context.Context, t Target, s []conditions.Disruption, clusters []string) error {
	for i, d := range s {
		if _, err := t.On(d.Cluster); d.Cluster != "" && err != nil {
			return fmt.Errorf("disrupt[%d].cluster %s: not in kubernetes.clusters", i, d.Cluster)
		}
	}
	for _, cl := range clusters {
		on, err := t.On(cl)
		if err != nil {
			return err
		}
		c, err := Connect(on)
		if err != nil {
			return err
		}
		oc, err := testCluster(ctx, c)
		if err != nil {
			return err
		}
		for i, d := range s {
			if d.Cluster != "" && d.Cluster != on.clusterName() {
				continue
			}
			if _, err := oc.daemonOf(i, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// setDisrupt resolves a lab's disruptions once its pods are placed: the
// daemon and the node (the server's or the client's pod's) of each.
func (r *Runtime) setDisrupt(ctx context.Context, ds []conditions.Disruption, cluster string, eps []lab.Endpoint) error {
	ds = slices.DeleteFunc(slices.Clone(ds), func(d conditions.Disruption) bool { return d.Cluster != "" && d.Cluster != cluster })
	if len(ds) == 0 {
		return nil
	}
	oc, err := testCluster(ctx, r.c)
	if err != nil {
		return err
	}
	r.disruptDir = oc.dir
	for i, d := range ds {
		daemon, err := oc.daemonOf(i, d)
		if err != nil {
			return err
		}
		node := ""
		for _, ep := range eps {
			if strings.HasPrefix(ep.Role, d.Node) && ep.Kube != nil {
				node = ep.Kube.Node
				break
			}
		}
		if oc.hosts[node] == "" {
			return fmt.Errorf("disrupt[%d].node %s: the lab has no %s pod on a node of the test cluster", i, d.Node, d.Node)
		}
		if r.prober == nil {
			for _, ep := range eps {
				if strings.HasPrefix(ep.Role, "client") && ep.Kube != nil {
					r.prober = ep.Kube
					break
				}
			}
		}
		r.disrupt = append(r.disrupt, disruption{Disruption: d, daemon: daemon, host: oc.hosts[node], node: node})
	}
	return nil
}

// Flap carries out the lab's disruptions (a spec's disrupt) at their
// offsets from start: each daemon stopped by its PID, started again
// after its down (at once for a restart, or when stop is called), and
// waited for until it does its job again, so that the next cell finds
// the cluster whole. Each is recorded as a flap of its node.
func (r *Runtime) Flap(start time.Time) func() []record.Flap {
	if len(r.disrupt) == 0 {
		return func() []record.Flap { return nil }
	}
	ended := make(chan struct{})
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		out []record.Flap
	)
	for _, d := range r.disrupt {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, at := range d.At {
				fl := r.disruptOnce(start, at, d, ended)
				mu.Lock()
				out = append(out, fl)
				mu.Unlock()
			}
		}()
	}
	return func() []record.Flap {
		close(ended)
		wg.Wait()
		return out
	}
}

// disruptOnce stops d's daemon at start+at and starts it again.
func (r *Runtime) disruptOnce(start time.Time, at time.Duration, d disruption, ended <-chan struct{}) (fl record.Flap) {
	fl = record.Flap{Link: d.host + " " + d.Node, Component: d.daemon, At: at.Seconds()}
	since := func(t time.Time) float64 { return t.Sub(start).Seconds() }
	select {
	case <-time.After(time.Until(start.Add(at))):
	case <-ended:
		fl.NotDone = true
		return fl
	}
	down, err := daemons.Stop(r.disruptDir, d.role())
	if err != nil {
		fl.Error = err.Error()
		return fl
	}
	fl.Down = since(down)
	// A new pod on the node, created as the daemon is gone.
	type probed struct {
		after float64
		err   string
	}
	newPod := make(chan probed, 1)
	go func() {
		after, err := r.newPodProbe(d.node, down)
		newPod <- probed{after, err}
	}()
	defer func() { p := <-newPod; fl.NewPod, fl.NewPodError = p.after, p.err }()
	if o := d.Outage(); o > 0 {
		select {
		case <-time.After(o):
		case <-ended:
		}
	}
	up, err := daemons.StartAgain(r.disruptDir, d.role())
	fl.Up = since(up)
	if err != nil {
		fl.Error = err.Error()
		return fl
	}
	err = poll.Until(context.Background(), readyWithin, 50*time.Millisecond, func() (bool, error) {
		ok, err := daemons.Ready(r.disruptDir, d.role(), up)
		if ok {
			fl.Ready = since(time.Now())
		}
		return ok, err
	})
	if err == poll.ErrTimeout {
		err = fmt.Errorf("%s not ready %s after it was started again", d.role(), readyWithin)
	}
	if err != nil {
		fl.Error = err.Error()
	}
	return fl
}

// newPodPort is where a new pod's listener listens.
const newPodPort = 18080

// newPodProbe creates a pod on node as a daemon went down (at from) and
// returns the time until it first answered a new connection from the
// lab's client pod: the CNI ADD, the sandbox and the first packet, while
// the daemon is away or coming back. The pod is deleted again.
func (r *Runtime) newPodProbe(node string, from time.Time) (float64, string) {
	if r.build == nil || r.prober == nil {
		return 0, "the lab has no client pod to probe from"
	}
	r.mu.Lock()
	r.newPods++
	name := fmt.Sprintf("new-pod-%d", r.newPods)
	r.mu.Unlock()
	if err := r.build.createPod(name, node, false); err != nil {
		return 0, err.Error()
	}
	defer func() {
		grace := int64(0)
		_ = r.c.remove(context.Background(), r.c.core, r.ns, "pods", name, &metav1.DeleteOptions{GracePeriodSeconds: &grace})
	}()
	p, err := r.build.waitRunning(name)
	if err != nil {
		return 0, err.Error()
	}
	s, err := startProbe(r, &record.KubePod{Namespace: r.ns, Pod: name, Node: node, PodIP: p.Status.PodIP}, r.prober, newPodPort)
	if err != nil {
		return 0, err.Error()
	}
	s.stop()
	return s.passed.Sub(from).Seconds(), ""
}
