// Package testcluster is `cnperf cluster`: a real multi-node Kubernetes on
// this machine, offline, for the kubernetes driver's tests and for
// measuring a CNI. The cluster is a cnperf lab (host cp for the control
// plane, host nodeI per node, on the lab's underlay switch) whose
// namespaces carry the lab's mark, whose processes sit in the lab's
// cgroups (cnperf/NAME/...) and whose files are in the lab's state
// directory: `cnperf cluster down`, `cnperf lab down` and `cnperf clean`
// remove it like any lab. The binaries come from scripts/k8s-build.sh (and
// scripts/flannel-build.sh for flanneld); docs/kubernetes.md says what
// runs where.
package testcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	fl "github.com/cnperf/cnperf/internal/lab/flannel"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// The versions cnperf's build scripts pin.
const (
	KubeVersion    = "v1.34.4"
	FlannelVersion = fl.Version
)

// ModeName is the mode a cluster's lab records in its marks (`lab ls`
// shows it): how `cluster down` knows a lab is a cluster.
const ModeName = "cluster"

// APIPort is the API server's port on host cp.
const APIPort = 6443

// MaxNameLen bounds a cluster's name: the nodes' containerd sockets live
// under the lab's state directory and a socket path has 108 bytes.
const MaxNameLen = 16

// CNIs are the pod networks a cluster can have, the first the default.
var CNIs = []string{"bridge", "flannel-vxlan", "flannel-udp", "flannel-host-gw", "cilium-vxlan", "cilium-native"}

// ProxyModes are the kube-proxy modes the test cluster sets up, the first
// the default; none runs no kube-proxy (Cilium replaces it). ipvs is not
// one: up loads no IPVS modules and sets up none of what that mode needs,
// whatever the kernel carries.
var ProxyModes = []string{"iptables", "nftables", "none"}

// IPFamilies are the address families a cluster can have, the first the
// default: dual gives nodes, pods and Services an IPv6 address beside the
// IPv4 one (IPv4 first, as a cluster made dual-stack later has it).
var IPFamilies = []string{"ipv4", "dual"}

// Options say what cluster to bring up.
type Options struct {
	Name      string
	Nodes     int
	CNI       string // one of CNIs
	ProxyMode string // one of ProxyModes
	IPFamily  string // one of IPFamilies
	// Exe is the cnperf binary the cluster's daemons are started through
	// (cnperf cluster exec).
	Exe string
	// KubeCache, FlannelCache and CiliumCache are the build scripts'
	// cache roots (CNPERF_K8S_CACHE, CNPERF_FLANNEL_CACHE,
	// CNPERF_CILIUM_CACHE).
	KubeCache, FlannelCache, CiliumCache string
	// ClangDir, when set (CNPERF_CILIUM_CLANG_DIR), is the directory the
	// Cilium agents find clang and llc in, instead of links to Debian's
	// clang-19 and llc-19: a test points it at one without them.
	ClangDir string
	// Keep leaves a cluster whose up failed as it is, for its logs.
	Keep bool
}

// DefaultOptions are the command's defaults, the caches from the
// environment as the build scripts read it.
func DefaultOptions() Options {
	o := Options{Nodes: 2, CNI: CNIs[0], ProxyMode: ProxyModes[0], IPFamily: IPFamilies[0],
		KubeCache: "/var/cache/cnperf/k8s", FlannelCache: "/var/cache/cnperf/flannel", CiliumCache: "/var/cache/cnperf/cilium",
		ClangDir: os.Getenv("CNPERF_CILIUM_CLANG_DIR")}
	if v := os.Getenv("CNPERF_K8S_CACHE"); v != "" {
		o.KubeCache = v
	}
	if v := os.Getenv("CNPERF_FLANNEL_CACHE"); v != "" {
		o.FlannelCache = v
	}
	if v := os.Getenv("CNPERF_CILIUM_CACHE"); v != "" {
		o.CiliumCache = v
	}
	return o
}

// Flannel says whether the CNI is flannel, and its backend's type as
// flannel's net-conf.json spells it.
func (o Options) Flannel() (backend string, ok bool) {
	b, ok := strings.CutPrefix(o.CNI, "flannel-")
	return b, ok
}

// KubeBin is where scripts/k8s-build.sh put the binaries.
func (o Options) KubeBin() string { return filepath.Join(o.KubeCache, KubeVersion, "bin") }

// Images is where scripts/k8s-build.sh put the images' tarballs.
func (o Options) Images() string { return filepath.Join(o.KubeCache, KubeVersion, "images") }

// Flanneld is where scripts/flannel-build.sh put flanneld.
func (o Options) Flanneld() string {
	return filepath.Join(o.FlannelCache, FlannelVersion, "bin", "flanneld")
}

// CheckName refuses a name that cannot be a cluster's, in the user's words.
func CheckName(name string) error {
	if lab.ValidName(name) != nil || len(name) > MaxNameLen || name[0] < 'a' || name[0] > 'z' {
		return fmt.Errorf("cluster name %q: want a lower-case letter, then up to %d of a-z, 0-9 and _", name, MaxNameLen-1)
	}
	return nil
}

// Validate refuses bad flags in one line each, before anything is looked
// at on the machine.
func (o Options) Validate() error {
	if err := CheckName(o.Name); err != nil {
		return err
	}
	if o.Nodes < 1 || o.Nodes > lab.ClusterMaxNodes {
		return fmt.Errorf("--nodes %d: want 1 to %d", o.Nodes, lab.ClusterMaxNodes)
	}
	switch {
	case o.ProxyMode == "ipvs":
		return errors.New("--kube-proxy ipvs: not supported by the test cluster yet; want iptables or nftables")
	case !slices.Contains(ProxyModes, o.ProxyMode):
		return fmt.Errorf("--kube-proxy %q: want iptables, nftables or none", o.ProxyMode)
	}
	if !slices.Contains(CNIs, o.CNI) {
		return fmt.Errorf("--cni %q: want %s", o.CNI, strings.Join(CNIs, ", "))
	}
	if _, ok := o.Cilium(); o.ProxyMode == "none" && !ok {
		return fmt.Errorf("--kube-proxy none with --cni %s: only Cilium replaces kube-proxy (--cni cilium-vxlan or cilium-native)", o.CNI)
	}
	switch {
	case o.IPFamily == "ipv6":
		return errors.New("--ip-family ipv6: the test cluster is ipv4 or dual (a dual cluster's pods and Services have IPv6 addresses to dial)")
	case !slices.Contains(IPFamilies, o.IPFamily):
		return fmt.Errorf("--ip-family %q: want ipv4 or dual", o.IPFamily)
	case o.Dual() && o.CNI != "bridge":
		// Flannel wants an IPv6 default route on every node to find its
		// public IPv6 address, and Cilium's IPv6 datapath is more BPF to
		// compile: neither is set up here yet.
		return fmt.Errorf("--ip-family dual: --cni %s is IPv4 only here; dual stack is built with --cni bridge", o.CNI)
	}
	return nil
}

// Dual says whether the cluster is dual-stack.
func (o Options) Dual() bool { return o.IPFamily == "dual" }

// serviceRange is the API server's and the controller-manager's
// --service-cluster-ip-range: IPv4 first (the kubernetes Service's
// family), then IPv6 on a dual cluster.
func (o Options) serviceRange() string {
	if o.Dual() {
		return lab.ClusterServiceCIDR + "," + lab.ClusterServiceCIDR6
	}
	return lab.ClusterServiceCIDR
}

// podRange is the cluster's pod network (the controller-manager's and
// kube-proxy's clusterCIDR), IPv4 first.
func (o Options) podRange() string {
	if o.Dual() {
		return lab.ClusterPodCIDR + "," + lab.ClusterPodCIDR6
	}
	return lab.ClusterPodCIDR
}

// Preflight refuses, before anything is made, what this machine lacks for
// the cluster: privileges, the builds, Debian's tools, cgroup v1, a name
// that is taken. Each is one line saying what to run.
func (o Options) Preflight() error {
	if err := namespace.NeedAdmin(); err != nil {
		return err
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kubectl", "k8s-relay"} {
		if !executable(filepath.Join(o.KubeBin(), b)) {
			return fmt.Errorf("%s missing: run scripts/k8s-build.sh first", filepath.Join(o.KubeBin(), b))
		}
	}
	for _, f := range []string{"pause.tar", "pause.ref"} {
		if _, err := os.Stat(filepath.Join(o.Images(), f)); err != nil {
			return fmt.Errorf("%s missing: run scripts/k8s-build.sh first", filepath.Join(o.Images(), f))
		}
	}
	if backend, ok := o.Flannel(); ok {
		if !executable(o.Flanneld()) {
			return fmt.Errorf("--cni %s: %s missing: run scripts/flannel-build.sh first", o.CNI, o.Flanneld())
		}
		// The UDP backend is a proxy on a TUN device.
		if _, err := os.Stat("/dev/net/tun"); backend == "udp" && err != nil {
			return fmt.Errorf("--cni %s: this machine has no /dev/net/tun for flannel's UDP backend", o.CNI)
		}
	}
	if _, ok := o.Cilium(); ok {
		if err := o.ciliumPreflight(); err != nil {
			return err
		}
	}
	tools := []string{"containerd", "ctr", "runc", "nsenter", "iptables", "conntrack"}
	if o.ProxyMode == "nftables" {
		tools = append(tools, "nft")
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			return fmt.Errorf("%s missing: run scripts/install-deps.sh k8s", t)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if !executable(filepath.Join(cniBin, p)) {
			return fmt.Errorf("%s missing: run scripts/install-deps.sh k8s", filepath.Join(cniBin, p))
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/cgroup.procs"); err != nil {
		return errors.New("no cgroup v1 memory controller at /sys/fs/cgroup/memory: the test cluster's kubelet needs cgroup v1")
	}
	if exists(o.Name) {
		return fmt.Errorf("cluster or lab %s exists: cnperf cluster down %s first", o.Name, o.Name)
	}
	return nil
}

// cniBin is where Debian's containernetworking-plugins are.
const cniBin = "/usr/lib/cni"

// exists says whether anything of a cluster or lab of that name is on the
// machine: its state or its namespaces.
func exists(name string) bool {
	if _, err := os.Stat(filepath.Join(lab.StateRoot, name)); err == nil {
		return true
	}
	if netns.CheckFree(name) != nil {
		return true
	}
	nss, _ := namespace.List(lab.Prefix + name + "-")
	return len(nss) > 0
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Dir is a cluster's directory: certificates, kubeconfigs, configs, logs,
// each node's containerd and kubelet. It is the lab's state, so it goes
// with the lab.
func Dir(name string) string { return lab.StatePath(name, "cluster") }

// KubeconfigPath is the kubeconfig for the root namespace (through the
// relay), or with inLab for inside the lab's namespaces.
func KubeconfigPath(name string, inLab bool) string {
	if inLab {
		return filepath.Join(Dir(name), "kubeconfig-lab")
	}
	return filepath.Join(Dir(name), "kubeconfig")
}

// hostName is the lab host of node i (0: the control plane's, cp).
func hostName(i int) string {
	if i == 0 {
		return "cp"
	}
	return fmt.Sprintf("node%d", i)
}

// hostAddr is the underlay address of node i (cp is host 1 of the lab,
// nodeI host I+1), as the lab's plan gives hosts in topology order.
func hostAddr(i int) string { return lab.UnderlayIP(i + 1).String() }

// hostAddr6 is node i's IPv6 underlay address on a dual cluster.
func hostAddr6(i int) string { return lab.UnderlayIP6(i + 1).String() }
