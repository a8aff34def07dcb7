package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// kubeClusters runs one spec over two test clusters at once, the bridge
// plugin's (one node) and Flannel's (across nodes: real Flannel, VXLAN,
// flanneld per node with the Kubernetes subnet manager, kube-proxy in
// nftables mode): every series of both measures, each lab records the
// cluster it was on, and the cells interleave between the clusters as
// between modes. The Flannel series' run.json names Flannel, its backend
// and the pods' MTU, and kube-proxy's mode, as the cluster says them, and
// their cells record what flanneld, kube-proxy and the kubelet spent. Two
// targets that are one cluster are refused (exit 2) before any namespace
// is made on it, and so are test clusters that are not up, with the
// commands that bring them up. Nothing is left on the clusters or the
// machine.
func kubeClusters(t *testing.T, bin string, k *testClusters) {
	requireBuilt(t, "scripts/flannel-build.sh", flanneld)
	kc1, kc2, image := k.get(t, bridgeCluster), k.get(t, flannelCluster), k.image

	spec := fmt.Sprintf(`name: mc
driver: kubernetes
modes: [k8s-host, k8s-pod, k8s-service]
reference: k8s-host
kubernetes:
  image: "%s"
  image_pull_policy: Never
  clusters:
    - {name: bridge, test_cluster: %s, cni: bridge}
    - {name: flannel, kubeconfig: "%s"}
variants:
  - {cluster: bridge, node_placement: same-node}
  - {cluster: flannel, node_placement: cross-node}
tests:
  - {workload: stream, duration: 1s, repetitions: 2}
  - {workload: rr, protocol: tcp, duration: 1s, repetitions: 2}
`, image, clusterName(bridgeCluster), kc2)
	dir := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	out, err := exec.Command(bin, "run", writeSpec(t, spec), "-o", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, lastLines(string(out), 40))
	}
	t.Logf("over two clusters in %s:\n%s", time.Since(start).Round(time.Second), lastLines(string(out), 30))
	if !strings.Contains(string(out), "against k8s-host on each series' own cluster and conditions") {
		t.Errorf("the run's tables do not compare each cluster's pods with its own k8s-host:\n%s", lastLines(string(out), 30))
	}
	m := readMeta(t, dir)
	if m.Status != "complete" || len(m.Modes) != 6 {
		t.Fatalf("status %s, %d series, want complete and 6", m.Status, len(m.Modes))
	}
	clusterOf := map[string]string{}
	for _, mm := range m.Modes {
		k := mm.Lab.Kube
		want := map[string]string{"bridge": "bridge", "flannel": "flannel"}
		if k == nil {
			t.Fatalf("series %s: no cluster in run.json", mm.Mode)
		}
		if !strings.Contains(mm.Mode, "/"+k.Cluster+",") || k.CNI != want[k.Cluster] || k.Server == "" {
			t.Errorf("series %s: run.json's cluster %q (CNI %q, server %q), want the series' own and its CNI", mm.Mode, k.Cluster, k.CNI, k.Server)
		}
		clusterOf[mm.Mode] = k.Cluster
		// k8s-host's pods are on the nodes' network: no pod MTU.
		podMTU := map[bool]int{true: 0, false: 1450}[strings.HasPrefix(mm.Mode, "k8s-host/")]
		if k.Cluster == "flannel" && (k.CNIBackend != "vxlan" || k.PodMTU != podMTU || k.ProxyMode != "nftables") {
			t.Errorf("series %s: run.json's cluster %+v, want Flannel's backend vxlan, pod MTU %d, kube-proxy nftables", mm.Mode, k, podMTU)
		}
	}
	flannelDaemons(t, m, clusterOf)
	measured := measuredBySeries(t, dir)
	for _, mm := range m.Modes {
		if measured[mm.Mode] == 0 {
			t.Errorf("series %s measured nothing (results of every cell: %v)", mm.Mode, measured)
		}
	}
	// Interleaved: each round of cells (one per series) goes from one
	// cluster to the other at least once, so the cluster changes at least
	// once a round, where running one cluster after the other changes once.
	changes, rounds := 0, len(m.Cells)/len(m.Modes)
	var order []string
	for i, c := range m.Cells {
		order = append(order, clusterOf[c.Mode])
		if i > 0 && clusterOf[c.Mode] != clusterOf[m.Cells[i-1].Mode] {
			changes++
		}
	}
	if rounds < 2 || changes < rounds {
		t.Errorf("cells by cluster %v: %d changes over %d rounds, want them interleaved", order, changes, rounds)
	}
	for _, kc := range []string{kc1, kc2} {
		assertNoLabsOn(t, kc)
	}

	t.Run("one cluster twice", func(t *testing.T) {
		twice := strings.Replace(spec, `{name: flannel, kubeconfig: "`+kc2+`"}`, `{name: flannel, kubeconfig: "`+kc1+`"}`, 1)
		if twice == spec {
			t.Fatal("spec not rewritten")
		}
		out, err := exec.Command(bin, "run", writeSpec(t, twice), "-o", filepath.Join(t.TempDir(), "run")).CombinedOutput()
		want := "kubernetes.clusters[1] (flannel): the same cluster as kubernetes.clusters[0] (bridge)"
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), want) || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Errorf("two targets on one cluster: exit %d, want 2 and one line saying %q:\n%s", code, want, out)
		}
		if got := kubectl(t, kc1, "get", "namespaces", "-o", "name"); strings.Contains(got, "cnperf-") {
			t.Errorf("a namespace was made before the refusal: %s", got)
		}
	})
	t.Run("not up", func(t *testing.T) {
		notUp := strings.Replace(spec, `test_cluster: `+clusterName(bridgeCluster), `test_cluster: mcabsent`, 1)
		if notUp == spec {
			t.Fatal("spec not rewritten")
		}
		out, err := exec.Command(bin, "run", writeSpec(t, notUp), "-o", filepath.Join(t.TempDir(), "run")).CombinedOutput()
		want := "bring it up with: cnperf cluster up mcabsent --nodes 1 --cni bridge"
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), want) {
			t.Errorf("a test cluster not up: exit %d, want 2 saying %q:\n%s", code, want, out)
		}
		if _, err := os.Stat("/run/cnperf/state/cmp_bridge"); err == nil {
			return // someone's cni-compare clusters are up
		}
		out, err = exec.Command(bin, "run", "--preset", "cni-compare", "--image", image, "-o", filepath.Join(t.TempDir(), "run")).CombinedOutput()
		want = "kubernetes.clusters: 3 test clusters not up; bring them up with: cnperf cluster up cmp_bridge --nodes 2 --cni bridge && cnperf cluster up cmp_flannel --nodes 2 --cni flannel-vxlan && cnperf cluster up cmp_cilium --nodes 2 --cni cilium-vxlan"
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), want) || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Errorf("cni-compare without its clusters: exit %d, want 2 and one line saying %q:\n%s", code, want, out)
		}
	})
	k.assertNothingLeft(t)
}

// flannelDaemons checks that the cells of the run's series on Flannel
// (clusterOf by series) record, from the cgroups of the nodes each series
// ran on, what kube-proxy, the kubelet and the CNI agent spent, and that
// the CNI agent is flanneld.
func flannelDaemons(t *testing.T, m record.Meta, clusterOf map[string]string) {
	t.Helper()
	fl := m
	fl.Cells = nil
	nodes := map[string]int{}
	for _, mm := range m.Modes {
		nodes[mm.Mode] = len(mm.Lab.Kube.Nodes)
	}
	for _, c := range m.Cells {
		if clusterOf[c.Mode] == "flannel" {
			fl.Cells = append(fl.Cells, c)
		}
	}
	assertDaemonsRecorded(t, fl, nodes, record.DaemonCNIAgent, record.DaemonKubeProxy, record.DaemonKubelet)
	for _, c := range fl.Cells {
		if a, ok := c.Daemons[record.DaemonCNIAgent]; ok && !slices.Equal(a.Names, []string{"flanneld"}) {
			t.Errorf("cell %d: the CNI agent is %v, want flanneld", c.Index, a.Names)
		}
	}
}
