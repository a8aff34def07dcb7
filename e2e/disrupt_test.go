package e2e

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kubeDisrupt restarts flanneld on the server's node of the Flannel test
// cluster 1 s into a short rr cell: the cell records the restart as a
// flap of the node (when flanneld was gone, started again and ready, and
// when a pod created on the node then first answered), the
// summary's flap table has its row, flanneld runs again (the cluster's
// status), and nothing is left on the cluster (the test's teardown checks
// the machine once the cluster is down). A disruption of a cluster the
// spec does not list is refused before anything is made.
func kubeDisrupt(t *testing.T, bin string, k *testClusters) {
	requireBuilt(t, "scripts/flannel-build.sh", flanneld)
	kc, image := k.get(t, flannelCluster), k.image
	spec := func(only string) string {
		return fmt.Sprintf(`name: dis
driver: kubernetes
modes: [k8s-pod]
reference: k8s-pod
kubernetes: {image: "%s", image_pull_policy: Never, clusters: [{name: c, test_cluster: %s}]}
conditions: {node_placement: cross-node}
tests:
  - {workload: rr, protocol: tcp, duration: 4s, interval: 200ms}
disrupt:
  - {component: cni-agent, node: server, at: [1s], down: restart, cluster: %s}
`, image, clusterName(flannelCluster), only)
	}
	out, err := exec.Command(bin, "run", writeSpec(t, spec("other")), "-o", filepath.Join(t.TempDir(), "refused")).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "disrupt[0].cluster other: not in kubernetes.clusters") {
		t.Errorf("a cluster the spec does not list: %v, want exit 2 saying so:\n%s", err, lastLines(string(out), 5))
	}
	dir := filepath.Join(t.TempDir(), "run")
	out, err = exec.Command(bin, "run", writeSpec(t, spec("c")), "-o", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, lastLines(string(out), 40))
	}
	m := readMeta(t, dir)
	var found int
	for _, c := range m.Cells {
		for _, fl := range c.Flaps {
			found++
			if fl.Component != "flanneld" || !strings.HasSuffix(fl.Link, " server") || fl.Error != "" ||
				!(fl.Down >= 1 && fl.Up >= fl.Down && fl.Ready >= fl.Up) || fl.NewPod <= 0 || fl.NewPodError != "" {
				t.Errorf("cell %d: disruption recorded as %+v, want flanneld on the server's node, gone after 1 s, started again and ready after, and a new pod's first answer", c.Index, fl)
			}
		}
	}
	if m.Status != "complete" || found != 1 {
		t.Fatalf("status %s, %d disruptions recorded, want complete and 1", m.Status, found)
	}
	sum, err := exec.Command(bin, "summary", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(sum), "flanneld node") {
		t.Errorf("summary: %v; want a flap row of flanneld:\n%s", err, lastLines(string(sum), 20))
	}
	st := clusterCmd(t, bin, "status", clusterName(flannelCluster))
	if strings.Contains(st, " gone") || strings.Count(st, "-flanneld") != 2 {
		t.Errorf("after the run, status says:\n%s\nwant both flanneld running", st)
	}
	assertNoLabsOn(t, kc)
	k.assertNothingLeft(t)
}
