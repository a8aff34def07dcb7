package testcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/testcluster/daemons"
)

// node brings up node i on host nodeI: containerd, the kubelet and
// kube-proxy (and flanneld with a flannel CNI), in one mount namespace of
// the node's own.
func (b *builder) node(ctx context.Context, i int) error {
	name, host := b.o.Name, hostName(i)
	ns, addr := lab.NS(name, host), hostAddr(i)
	nd := filepath.Join(b.dir, host)
	for _, d := range []string{"cni/net.d", "kubelet", "pod-logs", "sysctl", "cilium-cni"} {
		if err := os.MkdirAll(filepath.Join(nd, d), 0o755); err != nil {
			return err
		}
	}
	fmt.Fprintf(b.log, "cluster %s: %s on %s (%s), CNI %s\n", name, host, ns, addr, b.o.CNI)
	nb := netdev.B{Lab: name}
	nodeIP := addr
	if b.o.Dual() {
		addr6 := hostAddr6(i)
		if err := hostIPv6(name, ns, addr6); err != nil {
			return err
		}
		// The kubelet's node IPs, IPv4 first: the node's InternalIP of
		// each family, which k8s-host and k8s-nodeport dial.
		nodeIP += "," + addr6
	}
	_, cilium := b.o.Cilium()
	if _, ok := b.o.Flannel(); !ok && !cilium {
		// The bridge CNI: routes to the other nodes' pod networks.
		var routes []netdev.Route
		for j := 1; j <= b.o.Nodes; j++ {
			if j != i {
				subnet, _ := lab.ClusterNodePods(j)
				routes = append(routes, netdev.Route{Dst: subnet, Via: net.ParseIP(hostAddr(j))})
				if b.o.Dual() {
					subnet6, _ := lab.ClusterNodePods6(j)
					routes = append(routes, netdev.Route{Dst: subnet6, Via: net.ParseIP(hostAddr6(j))})
				}
			}
		}
		if err := nb.Routes(ns, routes); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(nd, "cni/net.d/10-cnperf.conflist"), []byte(bridgeConflist(name, i, nd, b.o.Dual())), 0o644); err != nil {
			return err
		}
	}
	if err := nb.Sysctl(ns, "net.ipv4.ip_forward", "1"); err != nil {
		return err
	}
	if err := b.pki.issue(identity{file: host, cn: "system:node:" + host, org: "system:nodes", dns: []string{host}, ips: []string{addr}}); err != nil {
		return err
	}
	api := fmt.Sprintf("https://%s:%d", hostAddr(0), APIPort)
	for _, kc := range [][2]string{{"kubelet", host}, {"kube-proxy", "kube-proxy"}, {"flannel", "flannel"}} {
		if err := b.pki.kubeconfig(filepath.Join(nd, kc[0]+".kubeconfig"), name, api, kc[1]); err != nil {
			return err
		}
	}
	pause, err := os.ReadFile(filepath.Join(b.o.Images(), "pause.ref"))
	if err != nil {
		return err
	}
	bins, bpffs := cniBin, ""
	if cilium {
		if bins, err = b.o.ciliumCNIBin(nd); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(nd, "cilium-cgroup"), 0o755); err != nil {
			return err
		}
		bpffs = ciliumBPFFS
	}
	files := map[string]string{
		"containerd.toml": containerdConfig(b.o.Name, nd, strings.TrimSpace(string(pause)), bins),
		"kubelet.yaml":    kubeletConfig(b.o.Name, i, nd, b.dir),
		"kube-proxy.yaml": proxyConfig(b.o) + nodeProxyConfig(i, nd),
	}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(nd, f), []byte(s), 0o644); err != nil {
			return err
		}
	}
	binds, err := sysctlBinds(nd)
	if err != nil {
		return err
	}
	if cilium {
		more, err := ciliumSysctlBinds(ns, nd)
		if err != nil {
			return err
		}
		binds = append(binds, more...)
	}
	// The node's daemons share one mount namespace of their own (every
	// mount private): container rootfs, pod shm, volumes and the pod
	// network namespaces' files stay in it and vanish with its last
	// process. These get a tmpfs there, so nothing of the node lands in
	// the machine's: the CRI's netns dir, the shims' sockets, the CNI
	// cache, the pods' log links.
	cpid, err := b.start(daemons.Daemon{Role: host + "-containerd", NS: ns, Cgroup: lab.ClusterDaemonCgroup(name, host, "containerd"), Node: true,
		Tmpfs: mountPoints, BPFFS: bpffs, Binds: binds,
		Argv: []string{"containerd", "--config", filepath.Join(nd, "containerd.toml")}})
	if err != nil {
		return err
	}
	b.mnt[i] = cpid
	sock := filepath.Join(nd, "containerd.sock")
	if err := b.wait(ctx, host+"'s containerd", 30*time.Second, func() (bool, error) {
		return exec.CommandContext(ctx, "ctr", "--address", sock, "version").Run() == nil, nil
	}); err != nil {
		return err
	}
	tars := []string{filepath.Join(b.o.Images(), "pause.tar")}
	if _, err := os.Stat(filepath.Join(b.o.Images(), "cnperf.tar")); err == nil {
		tars = append(tars, filepath.Join(b.o.Images(), "cnperf.tar"))
	}
	for _, t := range tars {
		if err := importImage(ctx, sock, t); err != nil {
			return err
		}
	}
	labels := "cnperf.io/cluster=" + name + ",cnperf.io/host=" + host
	switch {
	case b.o.CNI == "bridge":
		// The bridge CNI says nothing through the API: the label tells
		// cnperf's kubernetes driver. Flannel annotates the nodes itself.
		labels += ",cnperf.io/cni=bridge"
	case cilium:
		// Cilium's agents no longer annotate nodes by default, and the
		// test cluster runs them without a DaemonSet's pods.
		labels += ",cnperf.io/cni=cilium"
	}
	bin := b.o.KubeBin()
	if _, err := b.start(daemons.Daemon{Role: host + "-kubelet", NS: ns, Cgroup: lab.ClusterDaemonCgroup(name, host, "kubelet"), MntPID: cpid,
		Argv: []string{filepath.Join(bin, "kubelet"), "--config", filepath.Join(nd, "kubelet.yaml"),
			"--kubeconfig", filepath.Join(nd, "kubelet.kubeconfig"), "--root-dir", filepath.Join(nd, "kubelet"),
			"--cert-dir", filepath.Join(nd, "kubelet", "pki"), "--hostname-override", host, "--node-ip", nodeIP,
			"--node-labels", labels, "--v=1"}}); err != nil {
		return err
	}
	if cilium {
		if err := b.ciliumAgent(i, nd, cpid); err != nil {
			return err
		}
	}
	if b.o.ProxyMode == "none" {
		return nil
	}
	if _, err := b.start(daemons.Daemon{Role: host + "-kube-proxy", NS: ns, Cgroup: lab.ClusterDaemonCgroup(name, host, "kube-proxy"), MntPID: cpid,
		Argv: []string{filepath.Join(bin, "kube-proxy"), "--config", filepath.Join(nd, "kube-proxy.yaml"), "--v=1"}}); err != nil {
		return err
	}
	return nil
}

// importImage puts an image tarball in a node's containerd, where pods
// with imagePullPolicy Never find it.
func importImage(ctx context.Context, sock, tar string) error {
	out, err := exec.CommandContext(ctx, "ctr", "--address", sock, "-n", "k8s.io", "images", "import", tar).CombinedOutput()
	if err != nil {
		return fmt.Errorf("import %s: %v: %s", tar, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// mountPoints get a tmpfs in each node's mount namespace; they must exist
// on the machine to be mounted on (makeMountPoints).
var mountPoints = []string{"/run/netns", "/run/containerd", "/var/lib/cni", "/var/log/containers", "/run/cilium"}

// madeMark is the file in a mount point that cnperf made, so that the
// last cluster's down removes it again, and only it.
const madeMark = ".cnperf-cluster-made"

// makeMountPoints makes the mount points that do not exist, marked.
func makeMountPoints() error {
	for _, d := range mountPoints {
		if _, err := os.Stat(d); err == nil {
			continue
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(d, madeMark), nil, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// removeMountPoints removes the mount points cnperf made, once no
// cluster is left on the machine.
func removeMountPoints() {
	if clusters, _ := filepath.Glob(filepath.Join(lab.StateRoot, "*", "cluster")); len(clusters) > 0 {
		return
	}
	for _, d := range mountPoints {
		if _, err := os.Stat(filepath.Join(d, madeMark)); err != nil {
			continue
		}
		_ = os.Remove(filepath.Join(d, madeMark))
		_ = os.Remove(d) // only when empty
	}
}

// sysctlBinds: the kubelet insists on kernel tunables it would set
// machine-wide (vm.overcommit_memory, kernel.panic, ...). With
// protectKernelDefaults it only checks them, and inside the node's own
// mount namespace it reads files that say what it wants, bound over
// /proc/sys: the machine's stay as they are.
func sysctlBinds(nd string) ([]string, error) {
	want := [][2]string{{"vm/overcommit_memory", "1"}, {"vm/panic_on_oom", "0"}, {"kernel/panic", "10"},
		{"kernel/panic_on_oops", "1"}, {"kernel/keys/root_maxkeys", "1000000"}, {"kernel/keys/root_maxbytes", "25000000"}}
	var binds []string
	for _, w := range want {
		real, err := os.ReadFile("/proc/sys/" + w[0])
		if err != nil || strings.TrimSpace(string(real)) == w[1] {
			continue
		}
		f := filepath.Join(nd, "sysctl", strings.ReplaceAll(w[0], "/", "."))
		if err := os.WriteFile(f, []byte(w[1]+"\n"), 0o644); err != nil {
			return nil, err
		}
		binds = append(binds, f+":/proc/sys/"+w[0])
	}
	return binds, nil
}

// bridgeConflist is the bridge CNI's config of node i: its pod subnet from
// the plan on bridge cni0, routed between nodes, no NAT between pods; on a
// dual cluster (dual) its IPv6 subnet too, each pod an address of each
// family (host-local's second range) and a default route of each.
func bridgeConflist(name string, i int, nd string, dual bool) string {
	subnet, gw := lab.ClusterNodePods(i)
	ranges, routes := fmt.Sprintf(`[[{"subnet": %q, "gateway": %q}]]`, subnet, gw), `[{"dst": "0.0.0.0/0"}]`
	if dual {
		subnet6, gw6 := lab.ClusterNodePods6(i)
		ranges = fmt.Sprintf(`[[{"subnet": %q, "gateway": %q}], [{"subnet": %q, "gateway": %q}]]`, subnet, gw, subnet6, gw6)
		routes = `[{"dst": "0.0.0.0/0"}, {"dst": "::/0"}]`
	}
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "cnperf-k8s-%s",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": %s,
        "routes": %s,
        "dataDir": %q
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, name, ranges, routes, filepath.Join(nd, "cni", "ipam"))
}

// containerdConfig is a node's containerd: its own root, state and
// sockets under the node's dir, the CRI with the local pause image and
// the node's CNI config.
func containerdConfig(name, nd, pause, bins string) string {
	// No process here may lower its oom_score_adj without CAP_SYS_RESOURCE
	// (bit 24 of the bounding set): runc would fail setting the pause's.
	restrict := !hasCap(24)
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
# opt would populate /opt/containerd; the others are snapshotters never used.
disabled_plugins = ["io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  # Pod network namespaces under the state dir, not /run/netns.
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = %[6]t
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[7]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[8]q
    conf_dir = %[9]q
    max_conf_num = 1
`, filepath.Join(nd, "containerd"), filepath.Join(nd, "containerd-state"), filepath.Join(nd, "containerd.sock"),
		filepath.Join(nd, "containerd.sock.ttrpc"), pause, restrict, filepath.Join(nd, "runc"), bins, filepath.Join(nd, "cni", "net.d"))
}

// hasCap says whether this process's bounding set holds capability bit.
func hasCap(bit uint) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapBnd:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && n>>bit&1 == 1
		}
	}
	return false
}

// kubeletConfig is node i's kubelet: cgroupfs under the cluster's lab
// cgroup, webhook authorization, no static pods, and the machine's kernel
// tunables only checked (sysctlBinds).
func kubeletConfig(name string, i int, nd, dir string) string {
	host := hostName(i)
	pki := filepath.Join(dir, "pki")
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %[2]s}
authorization: {mode: Webhook}
tlsCertFile: %[3]s
tlsPrivateKeyFile: %[4]s
containerRuntimeEndpoint: unix://%[5]s
imageServiceEndpoint: unix://%[5]s
cgroupDriver: cgroupfs
cgroupRoot: /cnperf/%[6]s/%[7]s
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
failSwapOn: false
failCgroupV1: false
protectKernelDefaults: true
podLogsDir: %[8]s
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
rotateCertificates: false
serverTLSBootstrap: false
maxPods: 110
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", imagefs.available: "1%%"}
`, hostAddr(i), filepath.Join(pki, "ca.crt"), filepath.Join(pki, host+".crt"), filepath.Join(pki, host+".key"),
		filepath.Join(nd, "containerd.sock"), name, host, filepath.Join(nd, "pod-logs"))
}

// proxyConfig is kube-proxy's configuration shared by every node, as
// kubeadm puts it in the kube-proxy ConfigMap.
func proxyConfig(o Options) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: %s
clusterCIDR: %s
# 0: leave the kernel's conntrack table size and timeouts alone (the table
# size is machine-wide).
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
`, o.ProxyMode, o.podRange())
}

// nodeProxyConfig is what node i's kube-proxy adds: its identity and
// addresses.
func nodeProxyConfig(i int, nd string) string {
	return fmt.Sprintf(`clientConnection: {kubeconfig: %s}
hostnameOverride: %s
bindAddress: %s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
`, filepath.Join(nd, "kube-proxy.kubeconfig"), hostName(i), hostAddr(i))
}
