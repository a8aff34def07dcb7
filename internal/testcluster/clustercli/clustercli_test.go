package clustercli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/testcluster"
)

// TestBadFlagsExit2: bad flags are one line and exit 2, before anything
// is looked at or made (a cluster name that could exist is used: nothing
// of it is touched).
func TestBadFlagsExit2(t *testing.T) {
	cat := lab.Catalog{Commands: func(_ string, stdout, stderr io.Writer) []*cobra.Command { return Commands(stdout, stderr) }}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "up", "t1", "--kube-proxy", "ipvs"}, "--kube-proxy ipvs: not supported by the test cluster yet; want iptables or nftables"},
		{[]string{"cluster", "up", "t1", "--kube-proxy", "nft"}, `--kube-proxy "nft": want iptables, nftables or none`},
		{[]string{"cluster", "up", "t1", "--kube-proxy", "none"}, "--kube-proxy none with --cni bridge: only Cilium replaces kube-proxy"},
		{[]string{"cluster", "up", "t1", "--kube-proxy", "none", "--cni", "flannel-vxlan"}, "--kube-proxy none with --cni flannel-vxlan"},
		{[]string{"cluster", "up", "t1", "--ip-family", "dual", "--cni", "cilium-vxlan"}, "--ip-family dual: --cni cilium-vxlan is IPv4 only here"},
		{[]string{"cluster", "up", "t1", "--ip-family", "v6"}, `--ip-family "v6": want ipv4 or dual`},
		{[]string{"cluster", "up", "t1", "--cni", "weave"}, `--cni "weave": want bridge, flannel-vxlan, flannel-udp, flannel-host-gw, cilium-vxlan, cilium-native`},
		{[]string{"cluster", "up", "t1", "--nodes", "0"}, "--nodes 0: want 1 to 60"},
		{[]string{"cluster", "up", "T1"}, `cluster name "T1"`},
		{[]string{"cluster", "down", "a-b"}, `cluster name "a-b"`},
		{[]string{"cluster", "status", "a-b"}, `cluster name "a-b"`},
		{[]string{"cluster", "pods", "t1", "--bursts", "1,101"}, "--bursts 101: a burst is 1 to 100 pods"},
		{[]string{"cluster", "pods", "t1", "--repetitions", "0"}, "--repetitions 0: 1 to 100"},
		{[]string{"cluster", "pods", "t1", "t2", "t1"}, "cluster t1: given twice"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := cli.Main(cat, c.args, &out, &errb)
		msg := strings.TrimSpace(errb.String())
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, msg, c.want)
		}
	}
}

// TestUnknownClusterExit2: a cluster name no cluster has is bad input, as
// every other command's unknown name is: one line, exit 2, with the
// clusters that are up. (down is idempotent: nothing to remove is done.)
func TestUnknownClusterExit2(t *testing.T) {
	cat := lab.Catalog{Commands: func(_ string, stdout, stderr io.Writer) []*cobra.Command { return Commands(stdout, stderr) }}
	const name = "zzabsent9"
	if _, err := os.Stat(testcluster.Dir(name)); err == nil {
		t.Skipf("a cluster %s is up", name)
	}
	tar := filepath.Join(t.TempDir(), "image.tar")
	if err := os.WriteFile(tar, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"cluster", "kubeconfig", name},
		{"cluster", "kubeconfig", name, "--lab"},
		{"cluster", "status", name},
		{"cluster", "import", name, tar},
		{"cluster", "pods", name},
	} {
		var out, errb bytes.Buffer
		code := cli.Main(cat, args, &out, &errb)
		msg := strings.TrimSpace(errb.String())
		want := "cnperf: cluster " + name + " is not up ("
		if code != 2 || !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line %q...", args, code, msg, want)
		}
	}
}
