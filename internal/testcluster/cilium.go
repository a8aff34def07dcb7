package testcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/kube/ciliumoff"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/lab/sysinfo"
	"github.com/cnperf/cnperf/internal/testcluster/daemons"
)

// CiliumVersion is the Cilium scripts/cilium-build.sh pins.
const CiliumVersion = "v1.20.2"

// Cilium says whether the CNI is Cilium, and its routing mode as
// cilium-config spells it (tunnel, native).
func (o Options) Cilium() (routing string, ok bool) {
	switch o.CNI {
	case "cilium-vxlan":
		return "tunnel", true
	case "cilium-native":
		return "native", true
	}
	return "", false
}

// CiliumDir is where scripts/cilium-build.sh put Cilium: bin/ and lib/bpf.
func (o Options) CiliumDir() string { return filepath.Join(o.CiliumCache, CiliumVersion) }

func (o Options) ciliumBin(b string) string { return filepath.Join(o.CiliumDir(), "bin", b) }

// ciliumBinaries are what the cluster runs of Cilium's build.
var ciliumBinaries = []string{"cilium-agent", "cilium-operator-generic", "cilium-cni", "cilium-dbg"}

// clangTools are what the agent compiles its BPF programs with, found in
// its PATH under these names; Debian names them with the version.
var clangTools = map[string]string{"clang": "/usr/bin/clang-19", "llc": "/usr/bin/llc-19"}

// ciliumPreflight refuses, before anything is made, a Cilium cluster the
// machine cannot run: no build, no clang/llc 19.
func (o Options) ciliumPreflight() error {
	for _, b := range ciliumBinaries {
		if !executable(o.ciliumBin(b)) {
			return fmt.Errorf("--cni %s: %s missing: run scripts/cilium-build.sh first", o.CNI, o.ciliumBin(b))
		}
	}
	if _, err := os.Stat(filepath.Join(o.CiliumDir(), "lib", "bpf", "bpf_lxc.c")); err != nil {
		return fmt.Errorf("--cni %s: Cilium's BPF sources missing in %s: run scripts/cilium-build.sh first", o.CNI, filepath.Join(o.CiliumDir(), "lib", "bpf"))
	}
	if o.ClangDir != "" {
		if fi, err := os.Stat(o.ClangDir); err != nil || !fi.IsDir() {
			return fmt.Errorf("CNPERF_CILIUM_CLANG_DIR %s: no such directory", o.ClangDir)
		}
		return nil
	}
	// The agent keeps its set of node addresses (not masqueraded) in an
	// ipset.
	if _, err := exec.LookPath("ipset"); err != nil {
		return fmt.Errorf("--cni %s: ipset missing: run scripts/install-deps.sh cilium", o.CNI)
	}
	for _, t := range []string{"clang", "llc"} {
		if !executable(clangTools[t]) {
			return fmt.Errorf("--cni %s: %s missing (Cilium compiles its BPF programs with it): run scripts/install-deps.sh cilium", o.CNI, clangTools[t])
		}
	}
	return nil
}

// ciliumOff are the agent's features the test cluster turns off in
// cilium-config: those this machine cannot carry, those whose binaries are
// not built, and those a measurement does not want; ciliumOffWhy says why
// each is off (docs/kubernetes.md has the list).
var ciliumOff = []string{"enable-bandwidth-manager", "enable-bgp-control-plane", "enable-bpf-masquerade",
	"enable-endpoint-health-checking", "enable-envoy-config", "enable-gateway-api", "enable-health-checking",
	"enable-hubble", "enable-ingress-controller", "enable-ipsec", "enable-ipv6", "enable-l7-proxy",
	"enable-local-redirect-policy", "enable-wireguard"}

// ciliumConfig is the cilium-config ConfigMap's data, as Helm writes it:
// what every agent and the operator read (--config-dir, one file per
// key), and what cnperf's kubernetes driver records from the cluster.
func ciliumConfig(o Options) map[string]string {
	routing, _ := o.Cilium()
	c := map[string]string{
		"cluster-name":                   "default",
		"cluster-id":                     "0",
		"ipam":                           "kubernetes",
		"k8s-require-ipv4-pod-cidr":      "true",
		"enable-ipv4":                    "true",
		"routing-mode":                   routing,
		"kube-proxy-replacement":         fmt.Sprint(o.ProxyMode == "none"),
		"enable-ipv4-masquerade":         "true",
		"identity-allocation-mode":       "crd",
		"cni-exclusive":                  "false",
		"enable-policy":                  "default",
		"enable-k8s-networkpolicy":       "true",
		"install-iptables-rules":         "true",
		"operator-api-serve-addr":        "127.0.0.1:9234",
		"operator-prometheus-serve-addr": "",
		"enable-metrics":                 "false",
		"debug":                          "false",
	}
	if routing == "tunnel" {
		c["tunnel-protocol"] = "vxlan"
	} else {
		c["ipv4-native-routing-cidr"] = lab.ClusterPodCIDR
		c["auto-direct-node-routes"] = "true"
	}
	if o.ProxyMode == "none" {
		// Without kube-proxy the agent reaches the API server itself, not
		// through the kubernetes Service it translates.
		c["k8s-service-host"] = hostAddr(0)
		c["k8s-service-port"] = fmt.Sprint(APIPort)
	}
	for _, k := range ciliumOff {
		c[k] = "false"
	}
	// Socket load balancing attaches to the agent's cgroup v2 root: the
	// agent runs in a cgroup namespace of its own (ciliumAgent), so that
	// is its own cgroup, which holds no pod. Kube-proxy replacement turns
	// it on whatever the config says; only in the node's host namespace
	// then, so the pods' Services are translated per packet at tc.
	if o.ProxyMode == "none" {
		c["bpf-lb-sock"] = "true"
		c["bpf-lb-sock-hostns-only"] = "true"
	} else {
		c["bpf-lb-sock"] = "false"
	}
	return c
}

// ciliumHost is what decides, on the machine, why some of ciliumOff are
// off: its kernel's build configuration and whether its cgroups are v2.
type ciliumHost struct {
	kernel  sysinfo.KernelConfig
	cgroup2 bool // /sys/fs/cgroup is the unified hierarchy (no v1 controllers)
}

// readCiliumHost reads the machine's ciliumHost.
func readCiliumHost() ciliumHost {
	var st unix.Statfs_t
	v2 := unix.Statfs(process.CgroupRoot, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
	return ciliumHost{kernel: sysinfo.ReadKernelConfig(), cgroup2: v2}
}

// lacks is a reason when the kernel says it was built without option:
// "the kernel has no WHAT (OPTION)"; "" when it has it or does not say.
func (h ciliumHost) lacks(option, what string) string {
	if has, known := h.kernel.Has(option); known && !has {
		return fmt.Sprintf("the kernel has no %s (%s)", what, option)
	}
	return ""
}

// ciliumOffWhy is why each feature cilium-config turns off is off, on h:
// what the kernel lacks where it says so, else why the test cluster leaves
// the feature off anyway.
func ciliumOffWhy(cfg map[string]string, h ciliumHost) map[string]string {
	or := func(kernel, otherwise string) string {
		if kernel != "" {
			return kernel
		}
		return otherwise
	}
	const noEnvoy = "needs the L7 proxy: no cilium-envoy binary is built"
	noCrypto := "no encryption on the pod network: a measurement compares it with the other CNIs' (Helm's default)"
	why := map[string]string{
		"enable-bandwidth-manager": or(h.lacks("CONFIG_NET_SCH_FQ", "fq qdisc"),
			"it would put fq on each node's device and pace the pods' TCP, which the other CNIs' nodes do not"),
		"enable-ipv6":                     "a Cilium test cluster is IPv4 only (--ip-family dual is built with the bridge CNI)",
		"enable-l7-proxy":                 "no cilium-envoy binary is built",
		"enable-envoy-config":             noEnvoy,
		"enable-ingress-controller":       noEnvoy,
		"enable-gateway-api":              noEnvoy + ", and the cluster has no Gateway API CRDs",
		"enable-hubble":                   "no observability wanted in a measurement",
		"enable-health-checking":          "cilium-health's endpoint needs cilium-health-responder, not built",
		"enable-endpoint-health-checking": "as enable-health-checking",
		"enable-wireguard":                or(h.lacks("CONFIG_WIREGUARD", "WireGuard"), noCrypto),
		"enable-ipsec":                    or(h.lacks("CONFIG_INET_ESP", "IPsec ESP"), noCrypto),
		"enable-bgp-control-plane":        "nodes share one switch: no BGP needed",
		"enable-local-redirect-policy":    "no LocalRedirectPolicy is used in a measurement (Helm's default)",
		// Cilium then falls back to legacy host routing (its log says
		// "BPF host routing requires enable-bpf-masquerade").
		"enable-bpf-masquerade": "iptables masquerades the pods' traffic leaving the cluster, as on the other CNIs' clusters (Helm's default); Cilium then routes on the host legacy-style, through the kernel's stack",
	}
	if cfg["bpf-lb-sock"] == "false" {
		why["bpf-lb-sock"] = "socket load balancing would act in the agent's own cgroup v2 only (no pod is in it): kube-proxy balances Services"
		if !h.cgroup2 {
			why["bpf-lb-sock"] = "the kubelet puts pods in cgroup v1 hierarchies, and socket load balancing attaches to cgroup v2 (here the agent's own: no pod is in it): kube-proxy balances Services"
		}
	}
	for k := range why {
		if cfg[k] != "false" {
			delete(why, k)
		}
	}
	return why
}

// ciliumConfigDir writes cilium-config as the agent's --config-dir reads
// it (a ConfigMap mounted as a volume: one file per key).
func ciliumConfigDir(dir string, cfg map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for k, v := range cfg {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ciliumLabels are cilium-config's labels: what a Helm-installed Cilium
// names itself by, and the version (the test cluster runs no DaemonSet
// whose image tag would say it).
func ciliumLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/part-of": "cilium", "app.kubernetes.io/name": "cilium-agent",
		"app.kubernetes.io/version": strings.TrimPrefix(CiliumVersion, "v")}
}

// ciliumObjects creates cilium-config in kube-system and writes it where
// the agents and the operator read it.
func (b *builder) ciliumObjects(ctx context.Context) error {
	cfg := ciliumConfig(b.o)
	why := ciliumOffWhy(cfg, readCiliumHost())
	whyJSON, err := json.Marshal(why)
	if err != nil {
		return err
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cilium-config", "namespace": "kube-system", "labels": ciliumLabels(),
			"annotations": map[string]string{ciliumoff.Annotation: string(whyJSON)}},
		"data": cfg}
	if err := b.api.create(ctx, "/api/v1/namespaces/kube-system/configmaps", cm); err != nil {
		return fmt.Errorf("cilium-config ConfigMap: %w", err)
	}
	return ciliumConfigDir(filepath.Join(b.dir, "cilium-config"), cfg)
}

// ciliumOperator starts cilium-operator-generic on host cp, as Cilium's
// Deployment runs it: it registers Cilium's CRDs and collects unused
// identities. It makes /var/run/cilium for its shell's socket, whatever
// its flags say: it runs in a mount namespace of its own where that is a
// tmpfs, so nothing of it lands in the machine's.
func (b *builder) ciliumOperator() error {
	cpd := filepath.Join(b.dir, "cp")
	kc := filepath.Join(cpd, "cilium-operator.kubeconfig")
	if err := b.pki.kubeconfig(kc, b.o.Name, fmt.Sprintf("https://127.0.0.1:%d", APIPort), "cilium"); err != nil {
		return err
	}
	_, err := b.start(daemons.Daemon{Role: "cilium-operator", NS: lab.NS(b.o.Name, hostName(0)),
		Cgroup: lab.ClusterDaemonCgroup(b.o.Name, hostName(0), "cilium-operator"), Node: true, Tmpfs: []string{"/run/cilium"},
		Env: []string{"K8S_NODE_NAME=" + hostName(0), "CILIUM_K8S_NAMESPACE=kube-system"},
		Argv: []string{b.o.ciliumBin("cilium-operator-generic"), "--config-dir=" + filepath.Join(b.dir, "cilium-config"),
			"--k8s-kubeconfig-path=" + kc, "--leader-election-lease-duration=15s"}})
	return err
}

// ciliumCNIBin is node nd's CNI bin dir: Debian's plugins and cilium-cni,
// which the agent's CNI config names.
func (o Options) ciliumCNIBin(nd string) (string, error) {
	dir := filepath.Join(nd, "cni", "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ents, err := os.ReadDir(cniBin)
	if err != nil {
		return "", err
	}
	links := map[string]string{"cilium-cni": o.ciliumBin("cilium-cni")}
	for _, e := range ents {
		links[e.Name()] = filepath.Join(cniBin, e.Name())
	}
	for n, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, n)); err != nil && !os.IsExist(err) {
			return "", err
		}
	}
	return dir, nil
}

// clangPath is the directory the agent finds clang and llc in: links to
// Debian's versioned ones in the cluster's dir (the machine's /usr/bin is
// left as it is), or o.ClangDir.
func (b *builder) clangPath() (string, error) {
	if b.o.ClangDir != "" {
		return b.o.ClangDir, nil
	}
	dir := filepath.Join(b.dir, "clang")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for n, target := range clangTools {
		if err := os.Symlink(target, filepath.Join(dir, n)); err != nil && !os.IsExist(err) {
			return "", err
		}
	}
	return dir, nil
}

// ciliumMachineSysctls are the kernel tunables the agent writes that are
// the machine's, not the node's network namespace's: inside the node's
// mount namespace a file holding the machine's value is bound over each,
// so the agent's write lands in the file.
var ciliumMachineSysctls = []string{"net/core/bpf_jit_enable", "kernel/unprivileged_bpf_disabled",
	"kernel/timer_migration", "net/core/fb_tunnels_only_for_init_net", "net/core/default_qdisc"}

// ciliumSysctlBinds are the binds of ciliumMachineSysctls for node nd,
// whose network namespace is ns: those of net.core that only the
// machine's namespace has are absent there, and the agent's write fails
// harmlessly (it ignores that error).
func ciliumSysctlBinds(ns, nd string) ([]string, error) {
	var binds []string
	for _, s := range ciliumMachineSysctls {
		real, err := os.ReadFile("/proc/sys/" + s)
		if err != nil {
			continue
		}
		there := false
		if err := namespace.Do(ns, func() error {
			_, err := os.Stat("/proc/sys/" + s)
			there = err == nil
			return nil
		}); err != nil {
			return nil, err
		}
		if !there {
			continue
		}
		f := filepath.Join(nd, "sysctl", strings.ReplaceAll(s, "/", "."))
		if err := os.WriteFile(f, real, 0o644); err != nil {
			return nil, err
		}
		binds = append(binds, f+":/proc/sys/"+s)
	}
	return binds, nil
}

// ciliumBPFFS is what a Cilium node's mount namespace gets besides
// mountPoints (whose /run/cilium holds the agent's state and socket, where
// cilium-cni and cilium-dbg look): a bpffs of its own (each agent pins its
// maps there, as in kind).
const ciliumBPFFS = "/sys/fs/bpf"

// ciliumAgent starts node i's cilium-agent, as Cilium's DaemonSet runs it
// (--config-dir from cilium-config), in the node's network and mount
// namespaces and in a cgroup namespace whose root is its own cgroup v2
// (the machine's cgroup v2 root holds every process here): the cgroup v2
// it mounts as --cgroup-root, and attaches its socket programs to, or
// detaches every such program from, is that one, never the machine's; it writes its CNI config once it is ready (ciliumReady puts
// it where containerd reads it).
func (b *builder) ciliumAgent(i int, nd string, mnt int) error {
	host := hostName(i)
	kc := filepath.Join(nd, "cilium.kubeconfig")
	if err := b.pki.kubeconfig(kc, b.o.Name, fmt.Sprintf("https://%s:%d", hostAddr(0), APIPort), "cilium"); err != nil {
		return err
	}
	clang, err := b.clangPath()
	if err != nil {
		return err
	}
	// The agent writes its kernel probes' results into its BPF sources
	// (include/bpf/features*.h): each node has its own copy, and the
	// build's cache stays as it was built.
	lib := filepath.Join(nd, "cilium-lib")
	if err := copyBPF(filepath.Join(b.o.CiliumDir(), "lib", "bpf"), filepath.Join(lib, "bpf")); err != nil {
		return fmt.Errorf("cilium-agent's BPF sources: %w", err)
	}
	_, err = b.start(daemons.Daemon{Role: host + "-cilium-agent", NS: lab.NS(b.o.Name, host),
		Cgroup: lab.ClusterDaemonCgroup(b.o.Name, host, "cilium-agent"), MntPID: mnt, CgroupNS: true,
		Env: []string{"K8S_NODE_NAME=" + host, "CILIUM_K8S_NAMESPACE=kube-system",
			"PATH=" + clang + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Argv: []string{b.o.ciliumBin("cilium-agent"), "--config-dir=" + filepath.Join(b.dir, "cilium-config"),
			"--k8s-kubeconfig-path=" + kc, "--lib-dir=" + lib,
			"--cgroup-root=" + filepath.Join(nd, "cilium-cgroup"), "--devices=eth0",
			"--write-cni-conf-when-ready=" + filepath.Join(nd, "cilium-cni", ciliumConflist)}})
	return err
}

// ciliumConflist is the CNI config the agent writes when ready.
const ciliumConflist = "05-cilium.conflist"

// ciliumReady waits, with a bound, for node i's agent to answer healthy
// on its API socket and write its CNI config, and puts that config in the
// node's CNI config dir: the node turns Ready then. On failure it says the
// agent's own reason. The agent writes its file atomically (a temporary
// file renamed): containerd 1.6's config watcher, on the node's dir,
// reloads on the temporary file's last event and stays "cni plugin not
// initialized", so the agent writes elsewhere and this copies the file
// with a plain write.
func (b *builder) ciliumReady(ctx context.Context, i int) error {
	host := hostName(i)
	nd := filepath.Join(b.dir, host)
	var conf []byte
	sock := fmt.Sprintf("/proc/%d/root/run/cilium/cilium.sock", b.mnt[i])
	err := b.wait(ctx, host+"'s cilium-agent", ciliumReadyWithin, func() (bool, error) {
		if !daemons.CiliumReady(sock) {
			return false, nil
		}
		var err error
		conf, err = os.ReadFile(filepath.Join(nd, "cilium-cni", ciliumConflist))
		return err == nil && len(conf) > 0, nil
	})
	if errors.Is(err, errTimeout) {
		return fmt.Errorf("%w: cilium-agent: %s", err, lastError(filepath.Join(b.dir, "logs", host+"-cilium-agent.log")))
	}
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(nd, "cni", "net.d", ciliumConflist), conf, 0o644)
}

// ciliumReadyWithin bounds an agent's start: the first compile of its BPF
// programs on 2 busy cores takes minutes.
const ciliumReadyWithin = 5 * time.Minute

// lastError is a log's last line at level error or fatal (Cilium's slog
// text), else its last line.
func lastError(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for j := len(lines) - 1; j >= 0; j-- {
		l := strings.ToLower(lines[j])
		if strings.Contains(l, "level=error") || strings.Contains(l, "level=fatal") {
			return shorten(strings.TrimSpace(lines[j]))
		}
	}
	return process.LastLogLine(path)
}

func shorten(l string) string {
	if len(l) > 400 {
		return l[:400] + "..."
	}
	return l
}

// copyBPF copies Cilium's BPF sources from src to dst, but their tests.
func copyBPF(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir() && (rel == "tests" || rel == "complexity-tests" || rel == "test-progs"):
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}
