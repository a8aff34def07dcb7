package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/record"
)

// Bounds of the pod-setup experiment: every burst is made at once on one
// node, so the node's pod limit (110 by default) bounds a burst.
const (
	MaxBurst         = 100
	MaxBursts        = 8
	MaxSetupReps     = 100
	MaxSetupClusters = 8
	maxSetupPods     = 20000 // samples kept: clusters × Σ bursts × repetitions
	podSetupTimeout  = 2 * time.Minute
	probePort        = "9" // nothing listens: a reset is the pod's kernel answering
)

// SetupCluster is a cluster the pod-setup experiment measures: its name,
// the kubeconfig that reaches its API server, the network namespace from
// which every node's pod network is routed (dials never leave it), the
// node the bursts go to and the image of the pods (present on the node).
type SetupCluster struct {
	Name, Kubeconfig, ProbeNS, Node, Image string
}

// PodSetup is what the experiment measured, to be read again: each
// cluster as it describes itself and every pod's timeline.
type PodSetup struct {
	Bursts      []int          `json:"bursts"`
	Repetitions int            `json:"repetitions"`
	Clusters    []SetupRecord  `json:"clusters"`
	Samples     []PodSetupTime `json:"samples"`
}

// SetupRecord is a cluster as measured: its name and what it says of
// itself (CNI, kube-proxy's mode, versions, the node).
type SetupRecord struct {
	Name string       `json:"name"`
	Kube *record.Kube `json:"kubernetes"`
}

// PodSetupTime is one pod's timeline in milliseconds, by the local clock
// from the watch: created (sent) → scheduled → sandbox network ready
// (PodReadyToStartContainers: the CNI ADD is done) → first packet (the
// pod's kernel answers a TCP connect) and, from its delete, gone (the
// kubelet tore its sandbox down, CNI DEL included). Missing steps are
// omitted (timed out).
type PodSetupTime struct {
	Cluster     string   `json:"cluster"`
	Burst       int      `json:"burst"`
	Repetition  int      `json:"repetition"`
	Pod         string   `json:"pod"`
	ScheduledMS *float64 `json:"scheduled_ms,omitempty"`     // from created
	ReadyMS     *float64 `json:"network_ready_ms,omitempty"` // from scheduled
	FirstMS     *float64 `json:"first_packet_ms,omitempty"`  // from scheduled
	DeleteMS    *float64 `json:"deletion_ms,omitempty"`      // from the delete
}

// CheckPodSetup refuses bounds out of range, in one line.
func CheckPodSetup(clusters, bursts []int, reps int) error {
	switch {
	case len(clusters) == 0 || len(clusters) > MaxSetupClusters:
		return fmt.Errorf("clusters: %d given, 1 to %d", len(clusters), MaxSetupClusters)
	case len(bursts) == 0 || len(bursts) > MaxBursts:
		return fmt.Errorf("--bursts: %d sizes, 1 to %d", len(bursts), MaxBursts)
	case reps < 1 || reps > MaxSetupReps:
		return fmt.Errorf("--repetitions %d: 1 to %d", reps, MaxSetupReps)
	}
	sum := 0
	for _, b := range bursts {
		if b < 1 || b > MaxBurst {
			return fmt.Errorf("--bursts %d: a burst is 1 to %d pods", b, MaxBurst)
		}
		sum += b
	}
	if n := len(clusters) * sum * reps; n > maxSetupPods {
		return fmt.Errorf("--bursts × --repetitions × clusters: %d pods, at most %d", n, maxSetupPods)
	}
	return nil
}

// timeline is one pod's times as the watch sees them.
type timeline struct {
	created, scheduled, ready, first, deleteSent, gone time.Time
	ip                                                 string
	probing                                            bool
}

// observe takes a watch event's pod, seen at a local time: the first
// sight of each step is its time.
func (t *timeline) observe(typ watch.EventType, p *corev1.Pod, at time.Time) {
	if typ == watch.Deleted {
		setOnce(&t.gone, at)
		return
	}
	if p.Spec.NodeName != "" || condTrue(p, corev1.PodScheduled) {
		setOnce(&t.scheduled, at)
	}
	if condTrue(p, corev1.PodReadyToStartContainers) {
		setOnce(&t.scheduled, at) // a missed event: the step is no later
		setOnce(&t.ready, at)
	}
	if t.ip == "" {
		t.ip = p.Status.PodIP
	}
}

func setOnce(t *time.Time, at time.Time) {
	if t.IsZero() {
		*t = at
	}
}

func condTrue(p *corev1.Pod, c corev1.PodConditionType) bool {
	for _, pc := range p.Status.Conditions {
		if pc.Type == c {
			return pc.Status == corev1.ConditionTrue
		}
	}
	return false
}

// sample is a timeline as milliseconds; a step not reached is nil.
func (t timeline) sample() PodSetupTime {
	ms := func(from, to time.Time) *float64 {
		if from.IsZero() || to.IsZero() {
			return nil
		}
		v := float64(to.Sub(from).Microseconds()) / 1000
		return &v
	}
	return PodSetupTime{ScheduledMS: ms(t.created, t.scheduled), ReadyMS: ms(t.scheduled, t.ready),
		FirstMS: ms(t.scheduled, t.first), DeleteMS: ms(t.deleteSent, t.gone)}
}

// RunPodSetup measures the clusters interleaved: each repetition runs
// every burst size on every cluster, the order rotated by one each time,
// so drift falls on each alike. Each burst has a namespace of its own,
// which a killed run leaves for `cnperf clean` (it is recorded like a lab).
func RunPodSetup(ctx context.Context, clusters []SetupCluster, bursts []int, reps int, log io.Writer) (PodSetup, error) {
	out := PodSetup{Bursts: bursts, Repetitions: reps}
	conns := make([]*Conn, len(clusters))
	for i, sc := range clusters {
		c, err := Connect(Target{Kubeconfig: sc.Kubeconfig})
		if err != nil {
			return out, fmt.Errorf("cluster %s: %w", sc.Name, err)
		}
		conns[i] = c
		k := &record.Kube{Server: c.Server}
		describeCluster(ctx, c, k, []string{sc.Node})
		out.Clusters = append(out.Clusters, SetupRecord{Name: sc.Name, Kube: k})
	}
	type cell struct{ cluster, burst int }
	var cells []cell
	for ci := range clusters {
		for _, b := range bursts {
			cells = append(cells, cell{ci, b})
		}
	}
	for r := 0; r < reps; r++ {
		for k := range cells {
			cl := cells[(k+r)%len(cells)]
			sc := clusters[cl.cluster]
			fmt.Fprintf(log, "repetition %d/%d: %s, burst of %d\n", r+1, reps, sc.Name, cl.burst)
			tl, err := burst(ctx, conns[cl.cluster], sc, cl.burst)
			for i, t := range tl {
				s := t.sample()
				s.Cluster, s.Burst, s.Repetition, s.Pod = sc.Name, cl.burst, r+1, podSetupName(i)
				out.Samples = append(out.Samples, s)
			}
			if err != nil {
				return out, fmt.Errorf("cluster %s, burst of %d: %w", sc.Name, cl.burst, err)
			}
		}
	}
	return out, nil
}

func podSetupName(i int) string { return fmt.Sprintf("p%03d", i) }

// burst creates n pods at once on the cluster's node, in a namespace of
// their own, times them until each answers, deletes them and times each
// until it is gone; the namespace goes at the end whatever happened.
func burst(ctx context.Context, c *Conn, sc SetupCluster, n int) ([]timeline, error) {
	name := fmt.Sprintf("podsetup%d", os.Getpid())
	ns := Namespace(name)
	id, _ := owner.Self()
	if err := writeTarget(name, target{Kubeconfig: sc.Kubeconfig, Namespace: ns, Mode: "pod-setup", Owner: id.String()}); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	labels := map[string]string{LabelManaged: managedBy, LabelLab: name, LabelMode: "pod-setup",
		LabelOwner: strings.ReplaceAll(id.String(), " ", "_"), LabelOwnerHost: labelValue(host)}
	if err := c.create(ctx, c.core, "", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}},
		&corev1.Namespace{}); err != nil {
		return nil, fmt.Errorf("kubernetes: create namespace %s: %w", ns, err)
	}
	tl, err := timeBurst(ctx, c, sc, ns, labels, n)
	if derr := deleteNamespace(context.Background(), c, ns, name); derr != nil {
		return tl, errors.Join(err, derr)
	}
	return tl, errors.Join(err, os.RemoveAll(filepath.Dir(lab.DriverStatePath(name, Name))))
}

func timeBurst(ctx context.Context, c *Conn, sc SetupCluster, ns string, labels map[string]string, n int) ([]timeline, error) {
	ctx, cancel := context.WithTimeout(ctx, podSetupTimeout)
	defer cancel()
	// The client's bound on a call (apiTimeout) would end the watch within a
	// long burst: the watch's client has none, ctx bounds it.
	sch := runtime.NewScheme()
	if err := corev1.AddToScheme(sch); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(c.REST)
	cfg.Timeout, cfg.GroupVersion, cfg.APIPath = 0, &corev1.SchemeGroupVersion, "/api"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(sch).WithoutConversion()
	wc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: watch client: %w", err)
	}
	w, err := wc.Get().Namespace(ns).Resource("pods").
		VersionedParams(&metav1.ListOptions{Watch: true}, c.params).Watch(ctx)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: watch pods in %s: %w", ns, err)
	}
	defer w.Stop()
	tl := make([]timeline, n)
	index := map[string]int{}
	for i := range tl {
		index[podSetupName(i)] = i
	}
	errc := make(chan error, n)
	var wg sync.WaitGroup
	no, grace := false, int64(5)
	for i := range tl {
		tl[i].created = time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: podSetupName(i), Labels: labels},
				Spec: corev1.PodSpec{
					// The scheduler places the pod (its step is timed) on
					// the one node every burst goes to.
					NodeSelector:                  map[string]string{corev1.LabelHostname: sc.Node},
					Containers:                    []corev1.Container{{Name: "pause", Image: sc.Image, ImagePullPolicy: corev1.PullNever}},
					RestartPolicy:                 corev1.RestartPolicyNever,
					TerminationGracePeriodSeconds: &grace,
					AutomountServiceAccountToken:  &no,
					EnableServiceLinks:            &no,
				}}
			if err := c.create(ctx, c.core, ns, "pods", pod, &corev1.Pod{}); err != nil {
				errc <- fmt.Errorf("kubernetes: create pod %s: %w", pod.Name, err)
			}
		}()
	}
	type answer struct {
		i  int
		at time.Time
	}
	answered := make(chan answer, n)
	done := 0
	dial := namespace.Dialer(sc.ProbeNS)
	for done < n {
		select {
		case err := <-errc:
			return tl, err
		case <-ctx.Done():
			return tl, fmt.Errorf("%d of %d pods answered within %s", done, n, podSetupTimeout)
		case a := <-answered:
			tl[a.i].first = a.at
			done++
		case ev, ok := <-w.ResultChan():
			if !ok {
				return tl, watchEnded(ctx)
			}
			p, isPod := ev.Object.(*corev1.Pod)
			i, mine := 0, false
			if isPod {
				i, mine = index[p.Name]
			}
			if !mine {
				continue
			}
			tl[i].observe(ev.Type, p, time.Now())
			if tl[i].ip != "" && !tl[i].probing {
				tl[i].probing = true
				go func(ip string) {
					if at, ok := firstAnswer(ctx, dial, ip); ok {
						answered <- answer{i, at}
					}
				}(tl[i].ip)
			}
		}
	}
	wg.Wait()
	for i := range tl {
		tl[i].deleteSent = time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.remove(ctx, c.core, ns, "pods", podSetupName(i), &metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
				errc <- fmt.Errorf("kubernetes: delete pod %s: %w", podSetupName(i), err)
			}
		}()
	}
	for gone := 0; gone < n; {
		select {
		case err := <-errc:
			return tl, err
		case <-ctx.Done():
			return tl, fmt.Errorf("%d of %d pods gone within %s of their delete", gone, n, podSetupTimeout)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return tl, watchEnded(ctx)
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type == watch.Deleted {
				if i, mine := index[p.Name]; mine && tl[i].gone.IsZero() {
					tl[i].observe(ev.Type, p, time.Now())
					gone++
				}
			}
		}
	}
	wg.Wait()
	return tl, nil
}

// firstAnswer dials the pod from the probe namespace every 5 ms until its
// kernel answers (a reset: nothing listens on the port; or a connection):
// the first packet that reached the pod and came back.
func firstAnswer(ctx context.Context, dial namespace.DialFunc, ip string) (time.Time, bool) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		conn, err := dial(dctx, "tcp", net.JoinHostPort(ip, probePort))
		cancel()
		if err == nil {
			conn.Close()
		}
		if err == nil || errors.Is(err, syscall.ECONNREFUSED) {
			return time.Now(), true
		}
		select {
		case <-ctx.Done():
			return time.Time{}, false
		case <-tick.C:
		}
	}
}

// SetupRow is one cluster and burst size over the repetitions: each
// step's per-repetition p50 and mean over the burst's pods, as means
// with their 95 % intervals over the repetitions.
type SetupRow struct {
	Cluster, CNI string
	Burst        int
	Steps        [3][2]analysis.MeanCI // network ready, first packet, deletion × p50, mean
}

// SetupTable is the rows of a measurement, clusters and bursts in the
// order measured.
func SetupTable(m PodSetup) []SetupRow {
	var rows []SetupRow
	for _, c := range m.Clusters {
		for _, b := range m.Bursts {
			row := SetupRow{Cluster: c.Name, CNI: c.Kube.CNI, Burst: b}
			if bk := c.Kube.CNIBackend; bk != "" {
				row.CNI += "/" + bk
			}
			for step := range row.Steps {
				var p50s, means []float64
				for r := 1; r <= m.Repetitions; r++ {
					var xs []float64
					for _, s := range m.Samples {
						if v := [3]*float64{s.ReadyMS, s.FirstMS, s.DeleteMS}[step]; s.Cluster == c.Name && s.Burst == b && s.Repetition == r && v != nil {
							xs = append(xs, *v)
						}
					}
					if len(xs) > 0 {
						p50s, means = append(p50s, stats.Median(xs)), append(means, stats.Mean(xs))
					}
				}
				row.Steps[step] = [2]analysis.MeanCI{analysis.MeanInterval(p50s), analysis.MeanInterval(means)}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// WriteSetupTable prints the table: milliseconds, mean [95 % interval].
func WriteSetupTable(w io.Writer, m PodSetup) {
	fmt.Fprintf(w, "Pod network setup, ms (mean over %d repetitions [95%% interval]; scheduled → network ready = CNI ADD, → first packet; delete → gone = CNI DEL)\n", m.Repetitions)
	fmt.Fprintf(w, "%-12s %-16s %5s  %-26s %-26s %-26s %-26s %-26s %-26s\n", "cluster", "cni", "burst",
		"ready p50", "ready mean", "first-packet p50", "first-packet mean", "deletion p50", "deletion mean")
	for _, r := range SetupTable(m) {
		fmt.Fprintf(w, "%-12s %-16s %5d", r.Cluster, r.CNI, r.Burst)
		for _, st := range r.Steps {
			for _, ci := range st {
				fmt.Fprintf(w, "  %-24s", ciText(ci))
			}
		}
		fmt.Fprintln(w)
	}
}

func ciText(ci analysis.MeanCI) string {
	switch {
	case ci.N == 0:
		return "-"
	case ci.N < 2:
		return fmt.Sprintf("%.1f", ci.Mean)
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", ci.Mean, ci.Lo, ci.Hi)
}

// WriteSetupJSON writes the measurement to be read again.
func WriteSetupJSON(path string, m PodSetup) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// watchEnded says why the pods' watch closed: the burst's bound (ctx ends
// the watch too) or the server.
func watchEnded(ctx context.Context) error {
	if ctx.Err() != nil {
		return fmt.Errorf("not done within %s: %w", podSetupTimeout, ctx.Err())
	}
	return errors.New("kubernetes: the pods' watch ended")
}
