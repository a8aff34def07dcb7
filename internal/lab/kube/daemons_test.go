package kube

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

// fakeMetricsAPI serves what DaemonMeter asks of a cluster: the version, the
// lab's nodes (labelled as a test cluster of another machine's, so no
// cgroups here), kube-system's agent pods, and, with metrics, their
// pod metrics.
func fakeMetricsAPI(t *testing.T, metrics bool) *Conn {
	t.Helper()
	pods := map[string]string{ // selector → pods (name@node)
		"k8s-app=cilium":     "cilium-a@n1,cilium-b@n2,cilium-c@n9",
		"k8s-app=kube-proxy": "kube-proxy-a@n1,kube-proxy-b@n2",
	}
	use := map[string]string{"cilium-a": "30m", "cilium-b": "10m", "cilium-c": "500m", "kube-proxy-a": "1m", "kube-proxy-b": "1m"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		p, sel := r.URL.Path, r.URL.Query().Get("labelSelector")
		switch {
		case p == "/version":
			fmt.Fprint(w, `{"gitVersion":"v1.34.4"}`)
		case strings.HasPrefix(p, "/api/v1/nodes/"):
			n := strings.TrimPrefix(p, "/api/v1/nodes/")
			fmt.Fprintf(w, `{"kind":"Node","apiVersion":"v1","metadata":{"name":%q,"labels":{"cnperf.io/cluster":"sp-elsewhere","cnperf.io/host":%q}}}`, n, n)
		case p == "/api/v1/namespaces/kube-system/pods":
			var items []string
			for _, pn := range strings.Split(pods[sel], ",") {
				if pn == "" {
					continue
				}
				name, node, _ := strings.Cut(pn, "@")
				items = append(items, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"kube-system"},"spec":{"nodeName":%q}}`, name, node))
			}
			fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[%s]}`, strings.Join(items, ","))
		case p == "/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods" && metrics:
			var items []string
			for _, pn := range strings.Split(pods[sel], ",") {
				name, _, _ := strings.Cut(pn, "@")
				items = append(items, fmt.Sprintf(`{"metadata":{"name":%q},"timestamp":"2026-11-27T16:00:00Z","window":"15s","containers":[{"name":"c","usage":{"cpu":%q,"memory":"10Mi"}}]}`, name, use[name]))
			}
			fmt.Fprintf(w, `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[%s]}`, strings.Join(items, ","))
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		}
	}))
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	conf := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: %q}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", srv.URL)
	if err := os.WriteFile(kc, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Connect(Target{Kubeconfig: kc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDaemonMeterFromPodMetrics: on a cluster whose nodes' cgroups are not
// on this machine, the agents' and kube-proxy's pods on the lab's nodes are
// read from metrics.k8s.io (a pod on another node is not summed); without
// metrics-server the meter says so.
func TestDaemonMeterFromPodMetrics(t *testing.T) {
	r := &Runtime{c: fakeMetricsAPI(t, true), nodes: []string{"n1", "n2"}}
	m, err := r.DaemonMeter()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if snap.Source != "metrics.k8s.io" {
		t.Errorf("source %q", snap.Source)
	}
	a := snap.Daemons[record.DaemonCNIAgent]
	if a.Nodes != 2 || a.Cumulative || a.CPURate < 0.0399 || a.CPURate > 0.0401 || a.MemoryBytes != 20<<20 || a.Window.Seconds() != 15 {
		t.Errorf("agent %+v, want the two pods on n1 and n2: 0.04 cores, 20 MiB, over 15 s", a)
	}
	if p := snap.Daemons[record.DaemonKubeProxy]; p.Nodes != 2 {
		t.Errorf("kube-proxy %+v, want 2 pods", p)
	}

	r = &Runtime{c: fakeMetricsAPI(t, false), nodes: []string{"n1"}}
	if _, err := r.DaemonMeter(); err == nil || !strings.Contains(err.Error(), "metrics.k8s.io") {
		t.Errorf("without metrics-server: %v, want an error naming metrics.k8s.io", err)
	}
}
