package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/testutil"
)

// assertClusterGone checks what a cluster makes on the machine:
// namespaces, processes, its state and cgroups.
func assertClusterGone(t *testing.T, name string) {
	t.Helper()
	if left, _ := namespace.List("cnperf-" + name + "-"); len(left) > 0 {
		t.Errorf("cluster %s left namespaces %v", name, left)
	}
	for _, p := range []string{"/run/cnperf/state/" + name, "/sys/fs/cgroup/memory/cnperf/" + name, "/sys/fs/cgroup/cpuset/cnperf/" + name} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("cluster %s left %s", name, p)
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && (strings.Contains(string(b), "/run/cnperf/state/"+name+"/") || strings.Contains(string(b), "/run/netns/cnperf-"+name+"-")) {
			t.Errorf("cluster %s left process %s: %s", name, filepath.Base(filepath.Dir(p)), strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

// assertNoLabsOn checks that no lab's namespace is left on the cluster.
func assertNoLabsOn(t *testing.T, kc string) {
	t.Helper()
	if got := kubectl(t, kc, "get", "namespaces", "-l", "app.kubernetes.io/managed-by=cnperf", "-o", "name"); strings.TrimSpace(got) != "" {
		t.Errorf("left on the cluster: %s", got)
	}
}

// kubectl runs the test cluster's kubectl.
func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(k8sBin, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestKube runs the kubernetes driver's tests on real Kubernetes test
// clusters, each kind of cluster brought up once for the subtests that can
// share it and taken down (checked gone) once the last of them ran: the
// bridge plugin's, Flannel's, Cilium's and a dual-stack one. Each subtest
// leaves nothing on its clusters or the machine, and neither does the
// test once its clusters are down.
func TestKube(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	k := newTestClusters(t, bin)
	t.Run("driver", func(t *testing.T) { kubeDriver(t, bin, k) })
	t.Run("policy not enforced", func(t *testing.T) { kubePolicyNotEnforced(t, bin, k) })
	t.Run("clusters", func(t *testing.T) { kubeClusters(t, bin, k) })
	t.Run("services", func(t *testing.T) { kubeServices(t, bin, k) })
	t.Run("disrupt", func(t *testing.T) { kubeDisrupt(t, bin, k) })
	k.done(bridgeCluster)
	k.done(flannelCluster)
	t.Run("dual stack", func(t *testing.T) { kubeDualStack(t, bin, k) })
	k.done(dualCluster)
	t.Run("cilium", func(t *testing.T) { kubeCilium(t, bin, k) })
	t.Run("policy cilium", func(t *testing.T) { kubePolicyCilium(t, bin, k) })
	k.done(ciliumCluster)
	assertNothingLeft(t, bin)
}

// kubeDriver runs ping-pong and stream on the four Kubernetes modes, same
// node and across nodes, on the bridge plugin's test cluster: every series
// measures, run.json names the nodes and the CNI, the socket run records
// the nodes' daemons (bridgeDaemons), and nothing is left on the cluster
// or the machine. Bad input is refused before anything is
// made, and an image the nodes cannot get fails the lab within a minute,
// leaving nothing.
func kubeDriver(t *testing.T, bin string, k *testClusters) {
	kc, image := k.get(t, bridgeCluster), k.image
	head := fmt.Sprintf(`driver: kubernetes
modes: [k8s-host, k8s-pod, k8s-service, k8s-nodeport]
reference: k8s-host
variants:
  - {name: same-node, node_placement: same-node}
  - {name: cross-node, node_placement: cross-node}
kubernetes: {image: "%s", image_pull_policy: Never}
`, image)
	runs := []struct{ name, spec string }{
		{"pingpong", "name: k8spp\n" + head + "pingpong: {min_size: 1, max_size: 100000, coverage: 0.0002, repetitions: 2, chunk: 10, port: 8080}\n"},
		{"stream", "name: k8sst\n" + head + "tests:\n  - {workload: stream, duration: 1s}\n  - {workload: rr, protocol: tcp, duration: 1s}\n"},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			start := time.Now()
			out, err := exec.Command(bin, "run", writeSpec(t, r.spec), "--kubeconfig", kc, "-o", dir).CombinedOutput()
			if err != nil {
				t.Fatalf("run: %v\n%s", err, lastLines(string(out), 40))
			}
			t.Logf("%s on the cluster in %s:\n%s", r.name, time.Since(start).Round(time.Second), lastLines(string(out), 40))
			m := readMeta(t, dir)
			if m.Status != "complete" || len(m.Modes) != 8 {
				t.Fatalf("status %s, %d series, want complete and 8", m.Status, len(m.Modes))
			}
			for _, mm := range m.Modes {
				k := mm.Lab.Kube
				if k == nil || k.CNI != "bridge" || k.ProxyMode != "iptables" || k.Version == "" || len(k.Nodes) == 0 || k.Nodes[0].Kubelet == "" {
					t.Fatalf("series %s: run.json's cluster %+v, want the nodes, their kubelet, the CNI (bridge), kube-proxy's mode (iptables)", mm.Mode, k)
				}
				var nodes []string
				for _, n := range k.Nodes {
					nodes = append(nodes, n.Name)
				}
				want := []string{"node1"}
				if strings.HasSuffix(mm.Mode, "cross-node") {
					want = []string{"node1", "node2"}
				}
				if !slices.Equal(nodes, want) {
					t.Errorf("series %s ran on %v, want %v", mm.Mode, nodes, want)
				}
				for _, ep := range mm.Lab.Endpoints {
					if ep.Kube == nil || ep.Kube.Pod == "" || ep.Kube.Node == "" {
						t.Errorf("series %s: endpoint %s has no pod recorded", mm.Mode, ep.Role)
					}
				}
			}
			measured := measuredBySeries(t, dir)
			for _, mm := range m.Modes {
				if measured[mm.Mode] == 0 {
					t.Errorf("series %s measured nothing (results of every cell: %v)", mm.Mode, measured)
				}
			}
			if r.name == "stream" {
				bridgeDaemons(t, bin, dir, m, string(out))
			}
			assertNoLabsOn(t, kc)
		})
	}
	t.Run("bad input", func(t *testing.T) {
		spec := writeSpec(t, "name: k8sbad\n"+strings.Replace(head, "image: \""+image+"\"", "image: \"cnperf/absent:none\"", 1)+
			"tests:\n  - {workload: stream, duration: 1s}\n")
		start := time.Now()
		cmd := exec.Command(bin, "run", spec, "--kubeconfig", kc, "--modes", "k8s-pod", "-o", filepath.Join(t.TempDir(), "run"))
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != 1 || !strings.Contains(string(out), "ErrImageNeverPull") || time.Since(start) > 90*time.Second {
			t.Errorf("an image the nodes lack: exit %d after %s, want 1 within a minute naming ErrImageNeverPull:\n%s", code, time.Since(start), lastLines(string(out), 5))
		}
		out, err = exec.Command(bin, "run", "--preset", "k8s-quick-sockets", "--kubeconfig", kc, "--image", image, "--nodes", "node1").CombinedOutput()
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), "cross-node needs two schedulable nodes") {
			t.Errorf("cross-node on one named node: exit %d, want 2 saying it needs two nodes:\n%s", code, lastLines(string(out), 5))
		}
		out, err = exec.Command(bin, "run", "--preset", "k8s-quick", "--kubeconfig", "/nonexistent", "--image", image).CombinedOutput()
		if code := exitCode(err); code != 2 || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Errorf("no kubeconfig: exit %d, want 2 and one line:\n%s", code, out)
		}
		assertNoLabsOn(t, kc)
	})
	k.assertNothingLeft(t)
}

// bridgeDaemons checks what the bridge plugin's cluster's nodes spent
// during the socket run in dir (run.json m): each cell records what
// kube-proxy, the kubelet and containerd spent on the nodes its series ran
// on, read from their cgroups, and no CNI agent (the bridge plugin has
// none); the summary and the report show kube-proxy's CPU per GB beside
// the workload's own.
func bridgeDaemons(t *testing.T, bin, dir string, m record.Meta, out string) {
	t.Helper()
	if strings.Contains(out, "not available") {
		t.Errorf("the run says the daemons cannot be read:\n%s", lastLines(out, 20))
	}
	nodes := map[string]int{}
	for _, mm := range m.Modes {
		nodes[mm.Mode] = len(mm.Lab.Kube.Nodes)
	}
	assertDaemonsRecorded(t, m, nodes, record.DaemonKubeProxy, record.DaemonKubelet, record.DaemonContainerd)
	for _, c := range m.Cells {
		if _, ok := c.Daemons[record.DaemonCNIAgent]; ok {
			t.Errorf("cell %d: a CNI agent recorded on the bridge plugin, which has none: %+v", c.Index, c.Daemons)
		}
	}
	sum, err := exec.Command(bin, "summary", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(sum), "kube-proxy ms/GB") {
		t.Errorf("summary: %v, want kube-proxy's CPU per GB:\n%s", err, sum)
	}
	t.Logf("summary:\n%s", sum)
	tables := filepath.Join(t.TempDir(), "tables")
	if out, err := exec.Command(bin, "report", dir, "--tables", tables, "-o", filepath.Join(t.TempDir(), "report.html")).CombinedOutput(); err != nil {
		t.Errorf("report: %v\n%s", err, out)
	} else if b, err := os.ReadFile(filepath.Join(tables, "tab-daemons.csv")); err != nil || !strings.Contains(string(b), "kube-proxy") {
		t.Errorf("report: the node daemons' table: %v\n%s", err, b)
	}
}

// assertDaemonsRecorded checks that every finished cell of a run on the
// test cluster records the roles given, read from the cgroups of the nodes
// its series ran on (nodes by series), and that over the run each spent
// some CPU and holds some memory.
func assertDaemonsRecorded(t *testing.T, m record.Meta, nodes map[string]int, roles ...string) {
	t.Helper()
	cpu := map[string]float64{}
	for _, c := range m.Cells {
		if c.Error != "" {
			continue
		}
		for _, role := range roles {
			d, ok := c.Daemons[role]
			if !ok {
				t.Errorf("cell %d (%s): no %s recorded: %+v", c.Index, c.Mode, role, c.Daemons)
				continue
			}
			if d.Source != "cgroup" || d.Nodes != nodes[c.Mode] || d.CPUSeconds < 0 || d.MemoryBytes <= 0 || len(d.Names) == 0 {
				t.Errorf("cell %d (%s): %s %+v, want from the cgroups of %d node(s), with memory", c.Index, c.Mode, role, d, nodes[c.Mode])
			}
			cpu[role] += d.CPUSeconds
		}
	}
	for _, role := range roles {
		if cpu[role] <= 0 {
			t.Errorf("%s spent no CPU over the whole run", role)
		}
	}
	t.Logf("node daemons' CPU over the run: %v", cpu)
}

// exitCode is a finished command's exit code (0 when err is nil, -1 when it
// did not run).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// measuredBySeries counts, per series, the good results a run stored: a
// ping-pong request answered, or a socket workload's total.
func measuredBySeries(t *testing.T, dir string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		var r struct {
			Workload, Mode, Kind, Error string
			Code                        int
		}
		if json.Unmarshal([]byte(line), &r) != nil || r.Mode == "" {
			continue
		}
		if (r.Workload == "pingpong" && r.Error == "" && r.Code == 200) || r.Kind == "total" {
			out[r.Mode]++
		}
	}
	return out
}

// kubeCilium runs the socket workloads on k8s-pod and k8s-service,
// same node and across nodes, on a test cluster whose pods are on real
// Cilium (VXLAN tunnel, an agent per node) without kube-proxy (Cilium's
// kube-proxy replacement balances the Service): run.json names Cilium, its
// version, routing mode, tunnel protocol, kube-proxy replacement and the
// features turned off with why, as the cluster's cilium-config says them;
// nothing is left on the cluster or the machine.
func kubeCilium(t *testing.T, bin string, k *testClusters) {
	requireBuilt(t, "scripts/cilium-build.sh", ciliumAgent)
	m := runCNISockets(t, bin, "k8scil", k.get(t, ciliumCluster), k.image)
	for _, mm := range m.Modes {
		k := mm.Lab.Kube
		if k == nil || k.CNI != "cilium" || k.CNIBackend != "vxlan" || k.PodMTU == 0 || k.ProxyMode != "" || k.Cilium == nil {
			t.Errorf("series %s: run.json's cluster %+v, want CNI cilium, backend vxlan, a pod MTU, no kube-proxy, Cilium described", mm.Mode, k)
			continue
		}
		c := k.Cilium
		if c.Version != "1.20.2" || c.RoutingMode != "tunnel" || c.TunnelProtocol != "vxlan" || c.KubeProxyReplacement != "true" || c.IPAM != "kubernetes" ||
			!slices.Contains(c.FeaturesOff, "enable-l7-proxy") || !slices.Contains(c.FeaturesOff, "enable-bandwidth-manager") || c.FeaturesOffWhy["enable-l7-proxy"] == "" {
			t.Errorf("series %s: run.json's Cilium %+v, want 1.20.2, tunnel vxlan, kube-proxy replacement, IPAM kubernetes, L7 proxy and bandwidth manager off with why", mm.Mode, c)
		}
	}
	k.assertNothingLeft(t)
}

// runCNISockets runs the socket workloads (stream and rr, 1 s each) on
// k8s-pod and k8s-service, same node and across nodes, on the cluster at
// kc, and returns the run's run.json, complete with its four series, each
// of which measured, and nothing of the run left on the cluster.
func runCNISockets(t *testing.T, bin, name, kc, image string) record.Meta {
	t.Helper()
	spec := fmt.Sprintf(`name: %s
driver: kubernetes
modes: [k8s-pod, k8s-service]
reference: k8s-pod
variants:
  - {name: same-node, node_placement: same-node}
  - {name: cross-node, node_placement: cross-node}
kubernetes: {image: "%s", image_pull_policy: Never}
tests:
  - {workload: stream, duration: 1s}
  - {workload: rr, protocol: tcp, duration: 1s}
`, name, image)
	dir := filepath.Join(t.TempDir(), "run")
	out, err := exec.Command(bin, "run", writeSpec(t, spec), "--kubeconfig", kc, "-o", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, lastLines(string(out), 40))
	}
	t.Logf("%s:\n%s", name, lastLines(string(out), 30))
	m := readMeta(t, dir)
	if m.Status != "complete" || len(m.Modes) != 4 {
		t.Fatalf("status %s, %d series, want complete and 4", m.Status, len(m.Modes))
	}
	measured := measuredBySeries(t, dir)
	for _, mm := range m.Modes {
		if measured[mm.Mode] == 0 {
			t.Errorf("series %s measured nothing (results of every cell: %v)", mm.Mode, measured)
		}
	}
	assertNoLabsOn(t, kc)
	return m
}
