package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// clusterKind is a kind of test cluster the kubernetes tests share: its
// node count and the flags of `cnperf cluster up` (CNI, kube-proxy mode, IP
// family), and the letter that names it.
type clusterKind struct {
	letter string
	nodes  int
	flags  []string
}

var (
	// bridgeCluster: the bridge plugin, kube-proxy in iptables mode.
	bridgeCluster = clusterKind{"b", 2, nil}
	// flannelCluster: real Flannel (VXLAN), kube-proxy in nftables mode.
	flannelCluster = clusterKind{"f", 2, []string{"--cni", "flannel-vxlan", "--kube-proxy", "nftables"}}
	// ciliumCluster: real Cilium (VXLAN), its kube-proxy replacement.
	ciliumCluster = clusterKind{"c", 2, []string{"--cni", "cilium-vxlan", "--kube-proxy", "none"}}
	// dualCluster: the bridge plugin, dual-stack.
	dualCluster = clusterKind{"d", 2, []string{"--ip-family", "dual"}}
)

// testClusters are the test clusters one test's subtests share: each kind
// is brought up once, by the first subtest that asks, with cnperf's image
// on it, and taken down by done or when the owning test ends, then checked
// gone. The subtests' nothing-left checks spare the clusters up
// (testClusters.assertNothingLeft): they judge only what the subtest made.
type testClusters struct {
	owner      *testing.T
	bin        string
	image, tar string
	up         map[string]*sharedCluster // by kind's letter
}

type sharedCluster struct {
	name, kubeconfig string
	failed           string // why it is not up: later asks fail at once
	down             func()
}

// newTestClusters saves cnperf's image once for every cluster of owner.
func newTestClusters(owner *testing.T, bin string) *testClusters {
	owner.Helper()
	requireKube(owner)
	image := fmt.Sprintf("cnperf/e2e:k%d", os.Getpid()%100000)
	tar := filepath.Join(owner.TempDir(), "image.tar")
	if out, err := exec.Command(bin, "image", "save", "-o", tar, "--name", image).CombinedOutput(); err != nil {
		owner.Fatalf("image save: %v\n%s", err, out)
	}
	return &testClusters{owner: owner, bin: bin, image: image, tar: tar, up: map[string]*sharedCluster{}}
}

// clusterName is the name of this process's cluster of kind k.
func clusterName(k clusterKind) string { return fmt.Sprintf("e%d%s", os.Getpid()%100000, k.letter) }

// get returns the kubeconfig of the cluster of kind k, brought up (and the
// image imported) if no subtest has; t is the subtest that asks, failed at
// once if the cluster could not come up.
func (c *testClusters) get(t *testing.T, k clusterKind) string {
	t.Helper()
	if s, ok := c.up[k.letter]; ok {
		if s.failed != "" {
			t.Fatal(s.failed)
		}
		return s.kubeconfig
	}
	name := clusterName(k)
	s := &sharedCluster{name: name, failed: fmt.Sprintf("test cluster %s did not come up (%s)", name, t.Name())}
	c.up[k.letter] = s
	var once sync.Once
	s.down = func() {
		once.Do(func() {
			s.failed, s.kubeconfig = "test cluster "+name+" is down", ""
			clusterCmd(c.owner, c.bin, "down", name)
			assertClusterGone(c.owner, name)
			clusterCmd(c.owner, c.bin, "down", name) // idempotent
		})
	}
	c.owner.Cleanup(s.down)
	start := time.Now()
	kc := strings.TrimSpace(clusterCmd(t, c.bin, append([]string{"up", name, "--nodes", strconv.Itoa(k.nodes)}, k.flags...)...))
	t.Logf("test cluster %s %v up in %s", name, k.flags, time.Since(start).Round(time.Second))
	clusterCmd(t, c.bin, "import", name, c.tar)
	if got := strings.TrimSpace(clusterCmd(t, c.bin, "kubeconfig", name)); got != kc {
		t.Fatalf("cluster kubeconfig says %s, up printed %s", got, kc)
	}
	s.kubeconfig, s.failed = kc, ""
	return kc
}

// done takes the cluster of kind k down, if it is up, and checks that
// nothing of it is left; the owning test calls it once no subtest needs
// the cluster.
func (c *testClusters) done(k clusterKind) {
	if s, ok := c.up[k.letter]; ok {
		s.down()
	}
}

// assertNothingLeft is the suite's assertNothingLeft for a subtest, the
// clusters up spared: they are for the subtests after it.
func (c *testClusters) assertNothingLeft(t *testing.T) {
	t.Helper()
	var kept []string
	for _, s := range c.up {
		if s.kubeconfig != "" {
			kept = append(kept, s.name)
		}
	}
	assertNothingLeft(t, c.bin, kept...)
}

// clusterCmd runs `cnperf cluster ARGS` and returns what it printed,
// failing t if it fails.
func clusterCmd(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"cluster"}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cnperf cluster %s: %v\n%s", strings.Join(args, " "), err, lastLines(stderr.String(), 30))
	}
	return stdout.String()
}
