package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// kubeDualStack runs, on the dual-stack test cluster (bridge CNI, two
// nodes), stream and rr (tcp, crr) on the four Kubernetes modes
// with ip_family ipv6 and dual: every series measures, each dialling the
// pods', Services' and nodes' IPv6 addresses as run.json records them,
// the servers on [::]; run.json says the cluster is dual; a policy with
// IPv6 is refused in one line before anything is made; nothing is left on
// the cluster or the machine.
func kubeDualStack(t *testing.T, bin string, k *testClusters) {
	kc, image := k.get(t, dualCluster), k.image
	// The nodes: a pod CIDR and an InternalIP of each family.
	nodes := kubectl(t, kc, "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name} {.spec.podCIDRs} {.status.addresses[*].address}{"\n"}{end}`)
	for _, want := range []string{"2001:2:0:8101::/64", "2001:2:0:8102::/64", "2001:2::2", "2001:2::3", "198.18.65.0/24", "198.18.0.2"} {
		if !strings.Contains(nodes, want) {
			t.Errorf("the nodes lack %s:\n%s", want, nodes)
		}
	}
	spec := fmt.Sprintf(`name: k6dual
driver: kubernetes
modes: [k8s-host, k8s-pod, k8s-service, k8s-nodeport]
reference: k8s-host
variants:
  - {name: v6, ip_family: ipv6}
  - {name: dual, ip_family: dual}
kubernetes: {image: "%s", image_pull_policy: Never}
tests:
  - {workload: stream, duration: 1s}
  - {workload: rr, protocol: tcp, duration: 1s}
  - {workload: rr, protocol: crr, duration: 1s}
`, image)
	dir := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	out, err := exec.Command(bin, "run", writeSpec(t, spec), "--kubeconfig", kc, "-o", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, lastLines(string(out), 40))
	}
	t.Logf("run in %s:\n%s", time.Since(start).Round(time.Second), lastLines(string(out), 30))
	m := readMeta(t, dir)
	if m.Status != "complete" || len(m.Modes) != 8 {
		t.Fatalf("status %s, %d series, want complete and 8", m.Status, len(m.Modes))
	}
	v6 := func(hostPort string) bool {
		h, _, err := net.SplitHostPort(hostPort)
		ip := net.ParseIP(h)
		return err == nil && ip != nil && ip.To4() == nil
	}
	for _, mm := range m.Modes {
		k := mm.Lab.Kube
		if k == nil || k.IPFamily != "dual" {
			t.Errorf("series %s: run.json's cluster %+v, want ip_family dual", mm.Mode, k)
			continue
		}
		for _, ep := range mm.Lab.Endpoints {
			if !v6(ep.Internal) || !v6(ep.External) || !strings.HasPrefix(ep.Listen, "[::]:") {
				t.Errorf("series %s: endpoint %s dials %s (external %s), listens on %s: want IPv6 and [::]", mm.Mode, ep.Role, ep.Internal, ep.External, ep.Listen)
			}
			kp := ep.Kube
			if kp == nil || !v6("["+kp.PodIP+"]:0") || !v6("["+kp.HostIP+"]:0") {
				t.Errorf("series %s: endpoint %s's pod %+v: want its IPv6 pod and host IPs", mm.Mode, ep.Role, kp)
				continue
			}
			if kp.ClusterIP != "" && !v6("["+kp.ClusterIP+"]:0") {
				t.Errorf("series %s: service %s's ClusterIP %s is not IPv6", mm.Mode, kp.Service, kp.ClusterIP)
			}
			if strings.HasPrefix(mm.Mode, "k8s-service") && !strings.HasPrefix(ep.Internal, "["+kp.ClusterIP+"]:") {
				t.Errorf("series %s: dials %s, not the Service's %s", mm.Mode, ep.Internal, kp.ClusterIP)
			}
		}
	}
	// Each test measured in each series: a total record per test.
	b, err := os.ReadFile(filepath.Join(dir, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	totals := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		var r record.Record
		if json.Unmarshal([]byte(line), &r) != nil || r.Kind != record.KindTotal {
			continue
		}
		// A total that moved something: bytes received (stream),
		// transactions (rr tcp and crr).
		var d struct {
			ReceiverBytes int64 `json:"receiver_bytes"`
			Transactions  int64 `json:"transactions"`
		}
		if json.Unmarshal(r.Data, &d) == nil && d.ReceiverBytes+d.Transactions > 0 {
			totals[fmt.Sprintf("%s test %d", r.Mode, r.Test)]++
		}
	}
	for _, mm := range m.Modes {
		for test := range 3 {
			if totals[fmt.Sprintf("%s test %d", mm.Mode, test)] == 0 {
				t.Errorf("series %s test %d measured nothing (totals: %v)", mm.Mode, test, totals)
			}
		}
	}
	if t.Failed() {
		t.Logf("samples.jsonl:\n%s", lastLines(string(b), 60))
	}
	// A policy with IPv6: refused in one line, exit 2, nothing made.
	bad := writeSpec(t, fmt.Sprintf("name: k6pol\ndriver: kubernetes\nmodes: [k8s-pod]\nreference: k8s-pod\nconditions: {ip_family: ipv6, network_policy: allow}\n"+
		"kubernetes: {image: %q, image_pull_policy: Never}\ntests:\n  - {workload: stream, duration: 1s}\n", image))
	out, err = exec.Command(bin, "run", bad, "--kubeconfig", kc, "-o", filepath.Join(t.TempDir(), "bad")).CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "ip_family ipv6 with a network policy") || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
		t.Errorf("ipv6 with a policy: exit %d, want 2 in one line:\n%s", code, lastLines(string(out), 5))
	}
	assertNoLabsOn(t, kc)
	k.assertNothingLeft(t)
}
