package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// k8sBin is where scripts/k8s-build.sh caches the test cluster's binaries.
const k8sBin = "/var/cache/cnperf/k8s/v1.34.4/bin"

// flanneld is where scripts/flannel-build.sh caches flanneld.
const flanneld = "/var/cache/cnperf/flannel/v0.28.10/bin/flanneld"

// ciliumAgent is where scripts/cilium-build.sh caches Cilium's agent.
const ciliumAgent = "/var/cache/cnperf/cilium/v1.20.2/bin/cilium-agent"

// requireBuilt skips the test when one of paths is missing, and fails it
// in CI, whose scripts/test.sh builds them all; how names the build.
func requireBuilt(t *testing.T, how string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			msg := fmt.Sprintf("not built (%s): %s", err, how)
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// requireKube is requireBuilt for the test cluster's own binaries.
func requireKube(t *testing.T) {
	t.Helper()
	var paths []string
	for _, b := range []string{"kube-apiserver", "kubelet", "etcd", "kubectl", "pause"} {
		paths = append(paths, filepath.Join(k8sBin, b))
	}
	requireBuilt(t, "scripts/install-deps.sh k8s && scripts/k8s-build.sh (about 15 minutes, once)", paths...)
}

// saveImage writes cnperf's workload image, named name, to a tarball that
// `cnperf cluster import` puts on a test cluster's nodes.
func saveImage(t *testing.T, bin, name string) (image, tar string) {
	t.Helper()
	image = "cnperf/e2e:" + name
	tar = filepath.Join(t.TempDir(), "image.tar")
	if out, err := exec.Command(bin, "image", "save", "-o", tar, "--name", image).CombinedOutput(); err != nil {
		t.Fatalf("image save: %v\n%s", err, out)
	}
	return image, tar
}

// upCluster brings up test cluster name with nodes nodes and the flags
// given (CNI, kube-proxy mode), imports the image at tar on it, and returns
// its kubeconfig and a down that takes it away, checks that nothing of it
// is left, and takes it down once more (down is idempotent); down also
// runs at the test's end, when the test stops early too.
func upCluster(t *testing.T, bin, name string, nodes int, tar string, flags ...string) (kubeconfig string, down func()) {
	t.Helper()
	cluster := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"cluster"}, args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("cnperf cluster %s: %v\n%s", strings.Join(args, " "), err, lastLines(stderr.String(), 30))
		}
		return stdout.String()
	}
	var once sync.Once
	down = func() {
		once.Do(func() {
			cluster("down", name)
			assertClusterGone(t, name)
			cluster("down", name)
		})
	}
	t.Cleanup(down)
	start := time.Now()
	kc := strings.TrimSpace(cluster(append([]string{"up", name, "--nodes", strconv.Itoa(nodes)}, flags...)...))
	t.Logf("test cluster %s %v up in %s", name, flags, time.Since(start).Round(time.Second))
	cluster("import", name, tar)
	if got := strings.TrimSpace(cluster("kubeconfig", name)); got != kc {
		t.Fatalf("cluster kubeconfig says %s, up printed %s", got, kc)
	}
	return kc, down
}

// testCluster brings up a test cluster named for this process with two
// nodes (unless flags say --nodes N), the CNI and kube-proxy mode flags
// give, and cnperf's image on it (upCluster).
func testCluster(t *testing.T, bin string, flags ...string) (kubeconfig, image string, down func()) {
	t.Helper()
	requireKube(t)
	nodes := 2
	if i := slices.Index(flags, "--nodes"); i >= 0 && i+1 < len(flags) {
		n, err := strconv.Atoi(flags[i+1])
		if err != nil {
			t.Fatalf("testCluster: --nodes %q", flags[i+1])
		}
		nodes, flags = n, slices.Delete(slices.Clone(flags), i, i+2)
	}
	return namedTestCluster(t, bin, fmt.Sprintf("e%d", os.Getpid()%100000), nodes, flags...)
}

// namedTestCluster is testCluster with the cluster's name and node count
// given, so that tests that keep clusters apart (pol1, pol2) never meet.
func namedTestCluster(t *testing.T, bin, name string, nodes int, flags ...string) (kubeconfig, image string, down func()) {
	t.Helper()
	requireKube(t)
	image, tar := saveImage(t, bin, name)
	kubeconfig, down = upCluster(t, bin, name, nodes, tar, flags...)
	return kubeconfig, image, down
}
