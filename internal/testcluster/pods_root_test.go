package testcluster_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/kube"
	"github.com/cnperf/cnperf/internal/testcluster"
)

// TestPodSetup times a burst of two pods on a one-node bridge cluster:
// every pod has its network-ready, first-packet and deletion times, the
// cluster is described, and no pod, namespace or state is left.
func TestPodSetup(t *testing.T) {
	bin := requireBuild(t)
	name := fmt.Sprintf("ps%d", os.Getpid()%100000)
	t.Cleanup(func() { _ = exec.Command(bin, "cluster", "down", name).Run() })
	if out, err := exec.Command(bin, "cluster", "up", name, "--nodes", "1", "--cni", "bridge").CombinedOutput(); err != nil {
		t.Fatalf("up: %v: %s", err, out)
	}
	file := filepath.Join(t.TempDir(), "pods.json")
	out, err := exec.Command(bin, "cluster", "pods", name, "--bursts", "2", "--repetitions", "1", "-o", file).CombinedOutput()
	if err != nil {
		t.Fatalf("pods: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "deletion p50") {
		t.Errorf("no table:\n%s", out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m kube.PodSetup
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Clusters) != 1 || m.Clusters[0].Kube.CNI != "bridge" || len(m.Samples) != 2 {
		t.Fatalf("measured %s", b)
	}
	for _, s := range m.Samples {
		if s.ScheduledMS == nil || s.ReadyMS == nil || s.FirstMS == nil || s.DeleteMS == nil || *s.FirstMS < 0 {
			t.Errorf("pod %s: a step has no time: %s", s.Pod, b)
		}
	}
	kubectl := filepath.Join(testcluster.DefaultOptions().KubeBin(), "kubectl")
	left, err := exec.Command(kubectl, "--kubeconfig", testcluster.KubeconfigPath(name, false), "get", "pods,namespaces",
		"-A", "-l", kube.LabelManaged+"=cnperf", "-o", "name").CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(left))) > 0 {
		t.Errorf("left on the cluster (%v): %s", err, left)
	}
	if st, _ := filepath.Glob("/run/cnperf/state/podsetup*"); len(st) > 0 {
		t.Errorf("left state %v", st)
	}
}
