package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubePolicyNotEnforced: on the test cluster whose pods are on the
// bridge plugin, which enforces no NetworkPolicy, a spec asking for a
// policy is refused in one line saying "not enforced", with exit 2 and
// nothing left on the cluster; the policy check (network_policy: probe)
// runs and records the lab's probe as not enforced, and the summary says
// so. A probe on it waits out its whole bound, so the spec sets that short.
func kubePolicyNotEnforced(t *testing.T, bin string, k *testClusters) {
	kc, image := k.get(t, bridgeCluster), k.image
	head := fmt.Sprintf(`driver: kubernetes
modes: [k8s-pod]
reference: k8s-pod
kubernetes: {image: "%s", image_pull_policy: Never, policy_probe_seconds: 3}
tests:
  - {workload: rr, protocol: tcp, duration: 1s}
`, image)
	leftOnCluster := func() {
		t.Helper()
		assertNoLabsOn(t, kc)
	}

	start := time.Now()
	spec := writeSpec(t, "name: polna\n"+head+"conditions: {node_placement: same-node}\nvariants: [{network_policy: none}, {policy_rules: 10}]\n")
	out, err := exec.Command(bin, "run", spec, "--kubeconfig", kc, "-o", filepath.Join(t.TempDir(), "run")).CombinedOutput()
	msg := strings.TrimSpace(string(out))
	if code := exitCode(err); code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "policy_rules 10: not enforced") || !strings.Contains(msg, "passing for 3s") {
		t.Errorf("a policy on the bridge plugin: exit %d, want 2 and one line saying policy_rules 10: not enforced, passing for the spec's 3s:\n%s", code, lastLines(msg, 10))
	}
	t.Logf("refused in %s: %s", time.Since(start).Round(time.Second), msg)
	leftOnCluster()

	dir := filepath.Join(t.TempDir(), "run")
	spec = writeSpec(t, "name: polck\n"+head+"conditions: {node_placement: same-node}\nvariants: [{name: none, network_policy: none}, {name: check, network_policy: probe}]\n")
	out, err = exec.Command(bin, "run", spec, "--kubeconfig", kc, "-o", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("the policy check: %v\n%s", err, lastLines(string(out), 30))
	}
	m := readMeta(t, dir)
	if m.Status != "complete" || len(m.Modes) != 2 {
		t.Fatalf("status %s, %d series, want complete and 2", m.Status, len(m.Modes))
	}
	for _, mm := range m.Modes {
		k := mm.Lab.Kube
		switch {
		case k == nil:
			t.Fatalf("series %s: no cluster recorded", mm.Mode)
		case strings.HasSuffix(mm.Mode, "/none") && (k.PolicyProbe != nil || k.Policy != ""):
			t.Errorf("series %s: policy %q, probe %+v; want neither", mm.Mode, k.Policy, k.PolicyProbe)
		case strings.HasSuffix(mm.Mode, "/check") && (k.PolicyProbe == nil || k.PolicyProbe.Enforced || k.PolicyProbe.Bound != 3*time.Second || k.Policy != ""):
			t.Errorf("series %s: policy %q, probe %+v; want no policy and a probe that found it not enforced", mm.Mode, k.Policy, k.PolicyProbe)
		}
	}
	measured := measuredBySeries(t, dir)
	for _, mm := range m.Modes {
		if measured[mm.Mode] == 0 {
			t.Errorf("series %s measured nothing (%v)", mm.Mode, measured)
		}
	}
	sum, err := exec.Command(bin, "summary", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(sum), "not enforced: the cluster's pod network let a deny-all policy pass (k8s-pod/check)") {
		t.Errorf("summary: %v, want it to say the check found policies not enforced:\n%s", err, sum)
	}
	leftOnCluster()
	k.assertNothingLeft(t)
}

// kubePolicyCilium measures the policy-cost curve on the two-node test
// cluster whose pods are on Cilium (VXLAN, its kube-proxy replacement): no policy, one allow rule, and
// policies of 10, 100 and 1000 rules of which one matches, each its own
// series; every series measures, each lab with a policy records the
// policy and the times a deny policy took to be enforced and lifted, and
// the summary shows them.
func kubePolicyCilium(t *testing.T, bin string, k *testClusters) {
	requireBuilt(t, "scripts/cilium-build.sh", ciliumAgent)
	kc, image := k.get(t, ciliumCluster), k.image
	spec := fmt.Sprintf(`name: polcil
driver: kubernetes
modes: [k8s-pod]
reference: k8s-pod
kubernetes: {image: "%s", image_pull_policy: Never}
conditions: {node_placement: cross-node}
variants:
  - {name: none, network_policy: none}
  - {name: allow, network_policy: allow}
  - {name: r10, policy_rules: 10}
  - {name: r100, policy_rules: 100}
  - {name: r1000, policy_rules: 1000}
tests:
  - {workload: rr, protocol: tcp, duration: 1s}
  - {workload: stream, duration: 1s}
`, image)
	dir := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	out, err := exec.Command(bin, "run", writeSpec(t, spec), "--kubeconfig", kc, "-o", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, lastLines(string(out), 40))
	}
	t.Logf("policy curve on cilium-vxlan in %s", time.Since(start).Round(time.Second))
	m := readMeta(t, dir)
	if m.Status != "complete" || len(m.Modes) != 5 {
		t.Fatalf("status %s, %d series, want complete and 5", m.Status, len(m.Modes))
	}
	rules := map[string]int{"none": 0, "allow": 1, "r10": 10, "r100": 100, "r1000": 1000}
	for _, mm := range m.Modes {
		k := mm.Lab.Kube
		variant := mm.Mode[strings.LastIndex(mm.Mode, "/")+1:]
		want, ok := rules[variant]
		switch {
		case k == nil || !ok:
			t.Fatalf("series %s: cluster %+v", mm.Mode, k)
		case want == 0:
			if k.Policy != "" || k.PolicyProbe != nil {
				t.Errorf("series %s: policy %q, probe %+v; want neither", mm.Mode, k.Policy, k.PolicyProbe)
			}
		case k.Policy != "allow" || k.PolicyRules != want:
			t.Errorf("series %s: policy %q of %d rules, want allow of %d", mm.Mode, k.Policy, k.PolicyRules, want)
		case k.PolicyProbe == nil || !k.PolicyProbe.Enforced || k.PolicyProbe.Deny <= 0 || k.PolicyProbe.Undeny <= 0 || k.PolicyProbe.Apply <= 0 || k.PolicyProbe.Deny > 30*time.Second:
			t.Errorf("series %s: probe %+v, want enforced with deny, allow-again and in-force times", mm.Mode, k.PolicyProbe)
		default:
			p := k.PolicyProbe
			t.Logf("series %s: deny enforced in %s, lifted in %s, the lab's policy in force in %s (probe every %s)", mm.Mode, p.Deny, p.Undeny, p.Apply, p.Every)
		}
	}
	measured := measuredBySeries(t, dir)
	for _, mm := range m.Modes {
		if measured[mm.Mode] == 0 {
			t.Errorf("series %s measured nothing (%v)", mm.Mode, measured)
		}
	}
	sum, err := exec.Command(bin, "summary", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(sum), "network policy: per lab") || !strings.Contains(string(sum), "allow, 1000 rules") {
		t.Errorf("summary: %v, want the policy table:\n%s", err, sum)
	}
	t.Logf("summary:\n%s", sum)
	assertNoLabsOn(t, kc)
	k.assertNothingLeft(t)
}
