package testcluster_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testcluster"
)

// requireCilium skips without Cilium's build (CI builds it, and fails
// instead).
func requireCilium(t *testing.T) {
	t.Helper()
	o := testcluster.DefaultOptions()
	if _, err := os.Stat(filepath.Join(o.CiliumDir(), "bin", "cilium-agent")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Cilium is not built: scripts/cilium-build.sh")
		}
		t.Skip("Cilium is not built: scripts/cilium-build.sh")
	}
}

// TestCilium brings up two-node Cilium clusters, VXLAN with kube-proxy
// and native routing with Cilium's kube-proxy replacement: a pod on node1
// answers a pod on node2 by its address and through a ClusterIP Service,
// each agent runs in its own daemon cgroup, and down leaves nothing, the
// machine's kernel.* and net.core.* tunables as they were. An agent that
// cannot compile its datapath (no clang) fails up in one line with the
// agent's reason, and what Cilium lacks is refused before anything is
// made. Run it under the machine's lab lock.
func TestCilium(t *testing.T) {
	bin := requireBuild(t)
	requireCilium(t)
	before := machineSysctls(t)
	for _, c := range []struct{ cni, proxy string }{{"cilium-vxlan", "iptables"}, {"cilium-native", "none"}} {
		t.Run(c.cni+"-"+c.proxy, func(t *testing.T) {
			name := fmt.Sprintf("cil%d%c", os.Getpid()%100000, c.cni[7])
			t.Cleanup(func() { _ = exec.Command(bin, "cluster", "down", name).Run() })
			start := time.Now()
			out, err := exec.Command(bin, "cluster", "up", name, "--nodes", "2", "--cni", c.cni, "--kube-proxy", c.proxy).Output()
			if err != nil {
				t.Fatalf("up: %v: %s", err, stderrOf(err))
			}
			t.Logf("%s with kube-proxy %s up in %s", c.cni, c.proxy, time.Since(start).Round(100*time.Millisecond))
			podsReach(t, strings.TrimSpace(string(out)))
			// The agents' and the operator's run directory is a tmpfs in
			// their own mount namespaces: the machine's holds at most the
			// mark of a mount point up made.
			if ents, _ := os.ReadDir("/run/cilium"); len(ents) > 1 || (len(ents) == 1 && ents[0].Name() != ".cnperf-cluster-made") {
				t.Errorf("the machine's /run/cilium holds %v", ents)
			}
			for i := 1; i <= 2; i++ {
				host := fmt.Sprintf("node%d", i)
				if !hasDaemon(name, host+"-cilium-agent") {
					t.Errorf("no cilium-agent recorded on %s", host)
				}
				if got := hasDaemon(name, host+"-kube-proxy"); got != (c.proxy != "none") {
					t.Errorf("%s: kube-proxy running %v with --kube-proxy %s", host, got, c.proxy)
				}
				if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/cpu", "cnperf", name, host, "daemons", "cilium-agent")); err != nil {
					t.Errorf("%s: the agent's daemon cgroup: %v", host, err)
				}
			}
			if code, msg := run(bin, "cluster", "down", name); code != 0 {
				t.Fatalf("down: exit %d: %s", code, msg)
			}
			nothingLeft(t, name)
		})
	}
	t.Run("no clang", func(t *testing.T) {
		name := fmt.Sprintf("cil%dc", os.Getpid()%100000)
		t.Cleanup(func() { _ = exec.Command(bin, "cluster", "down", name).Run() })
		cmd := exec.Command(bin, "cluster", "up", name, "--nodes", "1", "--cni", "cilium-vxlan")
		cmd.Env = append(os.Environ(), "CNPERF_CILIUM_CLANG_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		msg := lastLineOf(string(out))
		if code := exitCode(err); code != 1 || !strings.Contains(msg, "cilium-agent") || !strings.Contains(msg, "clang") {
			t.Errorf("up without clang: exit %d, last line %q; want 1 with the agent's reason naming clang", code, msg)
		}
		nothingLeft(t, name)
	})
	t.Run("preflight", func(t *testing.T) {
		for _, c := range []struct{ env, want string }{
			{"CNPERF_CILIUM_CACHE=" + t.TempDir(), "run scripts/cilium-build.sh"},
			{"CNPERF_CILIUM_CLANG_DIR=/nonexistent/clang", "CNPERF_CILIUM_CLANG_DIR /nonexistent/clang: no such directory"},
		} {
			name := fmt.Sprintf("cil%dp", os.Getpid()%100000)
			cmd := exec.Command(bin, "cluster", "up", name, "--cni", "cilium-native")
			cmd.Env = append(os.Environ(), c.env)
			out, err := cmd.CombinedOutput()
			if code := exitCode(err); code != 2 || !strings.Contains(string(out), c.want) || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
				t.Errorf("%s: exit %d %q, want 2 and one line with %q", c.env, code, out, c.want)
			}
			nothingLeft(t, name)
		}
	})
	// The agents write into their own copies of the BPF sources, never
	// into the build's cache.
	o := testcluster.DefaultOptions()
	if stamp, err := os.Stat(filepath.Join(o.CiliumDir(), "bin", ".stamp")); err == nil {
		_ = filepath.WalkDir(o.CiliumDir(), func(p string, d os.DirEntry, err error) error {
			if fi, ierr := os.Stat(p); err == nil && ierr == nil && !d.IsDir() && fi.ModTime().After(stamp.ModTime()) {
				t.Errorf("the Cilium build's %s changed after it was built", p)
			}
			return nil
		})
	}
	after := machineSysctls(t)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("the machine's %s changed: %q, was %q", k, after[k], v)
		}
	}
}

// podsReach runs a server pod on node1 and, on node2, a client to its
// address and one to a ClusterIP Service in front of it: both must
// complete transactions.
func podsReach(t *testing.T, kc string) {
	t.Helper()
	o := testcluster.DefaultOptions()
	ref, err := os.ReadFile(filepath.Join(o.Images(), "cnperf.ref"))
	if err != nil {
		t.Skip("no cnperf image in the Kubernetes build: scripts/k8s-build.sh")
	}
	image := strings.TrimSpace(string(ref))
	kubectl := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(o.KubeBin(), "kubectl"), append([]string{"--kubeconfig", kc}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	pod := func(name, node, restart string, cmd ...string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"labels":{"app":%q}},
"spec":{"nodeName":%q,"restartPolicy":%q,"containers":[{"name":"c","image":%q,"imagePullPolicy":"Never","command":["%s"]}]}}`,
			name, name, node, restart, image, strings.Join(cmd, `","`))
	}
	kubectl(pod("srv", "node1", "Always", "/cnperf", "serve", "rr", "--listen", ":5202"), "apply", "-f", "-")
	kubectl(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"srv"},"spec":{"selector":{"app":"srv"},"ports":[{"port":5202}]}}`, "apply", "-f", "-")
	kubectl("", "wait", "--for=condition=Ready", "pod/srv", "--timeout=120s")
	podIP := kubectl("", "get", "pod", "srv", "-o", "jsonpath={.status.podIP}")
	svcIP := kubectl("", "get", "service", "srv", "-o", "jsonpath={.spec.clusterIP}")
	for _, c := range [][2]string{{"to-pod", podIP}, {"to-service", svcIP}} {
		kubectl(pod(c[0], "node2", "Never", "/cnperf", "rr", "-c", c[1], "-t", "1s"), "apply", "-f", "-")
	}
	for _, c := range []string{"to-pod", "to-service"} {
		cmd := exec.Command(filepath.Join(o.KubeBin(), "kubectl"), "--kubeconfig", kc, "wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/"+c, "--timeout=90s")
		if out, err := cmd.CombinedOutput(); err != nil {
			logs, _ := exec.Command(filepath.Join(o.KubeBin(), "kubectl"), "--kubeconfig", kc, "logs", c).CombinedOutput()
			t.Errorf("%s (pod %s, service %s) did not succeed: %v %s\n%s", c, podIP, svcIP, err, out, logs)
		}
	}
}

// machineSysctls are the root namespace's kernel.* and net.core.*
// tunables, but those that move by themselves.
func machineSysctls(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("sysctl", "-a").Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("sysctl -a: %v", err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(l, " = ")
		if !ok || !(strings.HasPrefix(k, "kernel.") || strings.HasPrefix(k, "net.core.")) {
			continue
		}
		switch k {
		case "kernel.ns_last_pid", "kernel.random.uuid", "kernel.random.entropy_avail", "kernel.pty.nr", "kernel.random.boot_id":
			continue
		}
		m[k] = v
	}
	return m
}

func lastLineOf(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
