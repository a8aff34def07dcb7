package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kubeServices runs the services condition on the bridge plugin's cluster
// (kube-proxy iptables) with none and 20 Services: the lab with 20 runs
// after the other, adds its Services and records them, the programming
// latency of the probe Services, the nodes' iptables rules and
// kube-proxy's syncs; the summary and the report show them; a count past
// the bound is refused before anything is made; and no Service of the
// condition is left on the cluster.
func kubeServices(t *testing.T, bin string, k *testClusters) {
	kc, image := k.get(t, bridgeCluster), k.image
	head := fmt.Sprintf(`driver: kubernetes
modes: [k8s-service]
reference: k8s-service
kubernetes: {image: "%s", image_pull_policy: Never}
tests:
  - {workload: rr, protocol: crr, duration: 1s, repetitions: 2}
`, image)
	out, err := exec.Command(bin, "run", writeSpec(t, "name: k8ssvcbad\n"+head+"variants: [{node_placement: same-node, services: 20001}]\n"), "--kubeconfig", kc,
		"-o", filepath.Join(t.TempDir(), "run")).CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "services 20001: want 0..20000") || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
		t.Errorf("services 20001: exit %d, want 2 and one line naming the field:\n%s", code, out)
	}
	assertNoLabsOn(t, kc)

	dir := filepath.Join(t.TempDir(), "run")
	// The spec lists the larger first: the run still measures none first.
	out, err = exec.Command(bin, "run", writeSpec(t, "name: k8ssvc\n"+head+"variants: [{node_placement: same-node, services: 20}, {node_placement: same-node}]\n"), "--kubeconfig", kc, "-o", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, lastLines(string(out), 40))
	}
	m := readMeta(t, dir)
	if m.Status != "complete" || len(m.Modes) != 2 {
		t.Fatalf("status %s, %d series, want complete and 2", m.Status, len(m.Modes))
	}
	for _, mm := range m.Modes {
		s := mm.Lab.Kube.Services
		if s == nil {
			t.Fatalf("series %s recorded no services", mm.Mode)
		}
		t.Logf("%s: %+v", mm.Mode, *s)
		if s.N != mm.Conditions.Services || s.Created != mm.Conditions.Services || len(s.ProgrammingNS) == 0 || len(s.ProgrammingNS)+s.Failed != 30 {
			t.Errorf("series %s: %d Services, %d created, %d of %d probes passed; want %d, %d, all 30 made",
				mm.Mode, s.N, s.Created, len(s.ProgrammingNS), len(s.ProgrammingNS)+s.Failed, mm.Conditions.Services, mm.Conditions.Services)
		}
		if len(s.Nodes) != 1 || s.Nodes[0].Iptables <= 0 || s.Nodes[0].CiliumLB != -1 || s.Syncs <= 0 {
			t.Errorf("series %s: nodes %+v, %d kube-proxy syncs; want node1's iptables rules, no Cilium map, syncs counted", mm.Mode, s.Nodes, s.Syncs)
		}
	}
	// Every cell of the series without Services ran before the first of
	// the one with 20.
	seen20 := false
	for _, c := range m.Cells {
		twenty := strings.Contains(c.Mode, "svc=20")
		if seen20 && !twenty {
			t.Fatalf("cell %d of %s ran after a cell with 20 Services", c.Index, c.Mode)
		}
		seen20 = seen20 || twenty
	}
	sum, err := exec.Command(bin, "summary", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(sum), "services: per lab") || !strings.Contains(string(sum), "prog p50 ms") {
		t.Errorf("summary: %v, want the services table:\n%s", err, sum)
	}
	t.Logf("summary:\n%s", sum)
	html := filepath.Join(t.TempDir(), "report.html")
	if out, err := exec.Command(bin, "report", dir, "-o", html).CombinedOutput(); err != nil {
		t.Errorf("report: %v\n%s", err, out)
	} else if b, _ := os.ReadFile(html); !strings.Contains(string(b), "Programming latency, median") || !strings.Contains(string(b), "First-packet latency") {
		t.Errorf("the report draws no curves against N")
	}
	if left := kubectl(t, kc, "get", "services", "-A", "-l", "cnperf.io/services", "-o", "name"); strings.TrimSpace(left) != "" {
		t.Errorf("Services left on the cluster:\n%s", left)
	}
	assertNoLabsOn(t, kc)
	k.assertNothingLeft(t)
}
