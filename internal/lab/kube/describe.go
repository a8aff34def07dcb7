package kube

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/record"
)

// knownCNIs are the pod networks whose daemonset (in kube-system or their
// own namespace) names them.
var knownCNIs = []string{"calico", "cilium", "flannel", "weave", "canal", "antrea", "kube-router", "kube-ovn", "ovn",
	"multus", "aws-node", "azure-cni", "gke", "romana", "kindnet", "kube-flannel"}

// describeCluster records the server's version, the nodes the lab used
// (kernel, kubelet, runtime, capacity, pod CIDRs), the CNI and
// kube-proxy's mode as far as the cluster tells them; what it cannot read
// stays empty rather than failing the lab.
func describeCluster(ctx context.Context, c *Conn, k *record.Kube, nodes []string) {
	if v, err := c.Version(ctx); err == nil {
		k.Version = v.GitVersion
	}
	var read []corev1.Node // those that could be read
	for _, name := range nodes {
		n := &corev1.Node{}
		if err := c.get(ctx, c.core, "", "nodes", name, n); err != nil {
			k.Nodes = append(k.Nodes, record.KubeNode{Name: name})
			continue
		}
		k.Nodes, read = append(k.Nodes, nodeRecord(n)), append(read, *n)
	}
	k.IPFamily = recordedFamily(k.Nodes)
	k.CNI, k.CNIFrom = findCNI(ctx, c)
	if k.CNI == "" {
		k.CNI, k.CNIFrom = cniFromNodes(read)
	}
	k.ProxyMode = proxyMode(ctx, c)
	k.CNIBackend = cniBackend(read)
	if k.Cilium = describeCilium(ctx, c); k.Cilium != nil && k.CNIBackend == "" {
		// Cilium's backend: its tunnel protocol, or native routing.
		k.CNIBackend = k.Cilium.TunnelProtocol
		if k.Cilium.RoutingMode == "native" {
			k.CNIBackend = "native"
		}
	}
}

// backendAnnotations are node annotations in which a pod network names
// its backend.
var backendAnnotations = []string{"flannel.alpha.coreos.com/backend-type"}

// cniBackend is the pod network's backend as the first used node that
// says it names it ("" when none does).
func cniBackend(nodes []corev1.Node) string {
	for _, n := range nodes {
		for _, a := range backendAnnotations {
			if v := n.Annotations[a]; v != "" {
				return v
			}
		}
	}
	return ""
}

// podMTU reads the MTU of eth0 inside the first of the lab's pods on the
// pod network (not hostNetwork): what the CNI gave its pods, which no API
// object states. 0 when there is no such pod or it cannot be read.
func podMTU(r *Runtime, pods []*record.KubePod) int {
	for _, p := range pods {
		if p == nil || p.HostNetwork {
			continue
		}
		out, err := r.output(p.Pod, "/cnperf", "pod", "mtu")
		if err != nil {
			return 0
		}
		mtu, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			return 0
		}
		return mtu
	}
	return 0
}

func nodeRecord(n *corev1.Node) record.KubeNode {
	info := n.Status.NodeInfo
	addrs := map[string]string{}
	for _, a := range n.Status.Addresses {
		// A dual-stack node has an InternalIP of each family: the first
		// keeps its key, the other is TYPE/IPv6 (or TYPE/IPv4).
		k := string(a.Type)
		if _, ok := addrs[k]; ok {
			k += "/IPv4"
			if isIPv6(a.Address) {
				k = string(a.Type) + "/IPv6"
			}
		}
		addrs[k] = a.Address
	}
	cpu, mem := n.Status.Capacity[corev1.ResourceCPU], n.Status.Capacity[corev1.ResourceMemory]
	return record.KubeNode{Name: n.Name, Addresses: addrs, Kernel: info.KernelVersion, OS: info.OSImage,
		Kubelet: info.KubeletVersion, KubeProxy: info.KubeProxyVersion, ContainerRuntime: info.ContainerRuntimeVersion,
		Arch: info.Architecture, CPU: cpu.String(), Memory: mem.String(), PodCIDRs: n.Spec.PodCIDRs}
}

// cniNamespaces are where pod networks run their node agents.
var cniNamespaces = []string{"kube-system", "kube-flannel", "calico-system", "cilium", "tigera-operator"}

// findCNI names the pod network from the pods a known CNI runs on the
// nodes (its daemonset's); with none, "" (a cluster whose nodes carry a
// plain CNI config, like the test cluster's bridge, says nothing through
// the API).
func findCNI(ctx context.Context, c *Conn) (string, string) {
	var found []string
	for _, ns := range cniNamespaces {
		list := &corev1.PodList{}
		if err := c.list(ctx, c.core, ns, "pods", list); err != nil {
			continue
		}
		for _, p := range list.Items {
			for _, cni := range knownCNIs {
				if strings.Contains(p.Name, cni) && !slices.Contains(found, cni) {
					found = append(found, cni)
				}
			}
		}
	}
	if len(found) == 0 {
		return "", ""
	}
	return strings.Join(found, "+"), "pods"
}

// LabelCNI names a node's pod network where nothing else tells: a
// cluster whose nodes carry a plain CNI config (the bridge plugin) can
// label them so (the test cluster does), and cnperf records it.
const LabelCNI = "cnperf.io/cni"

// cniAnnotations are node annotations pod networks write, by network.
var cniAnnotations = map[string]string{
	"flannel.alpha.coreos.com/backend-type": "flannel",
	"projectcalico.org/IPv4Address":         "calico",
	"io.cilium.network.ipv4-pod-cidr":       "cilium",
	"kube-router.io/pod-cidr":               "kube-router",
	"node.antrea.io/mac-address":            "antrea",
}

// cniFromNodes names the pod network from what the nodes carry: the
// cnperf.io/cni label, or an annotation a known network writes.
func cniFromNodes(nodes []corev1.Node) (string, string) {
	for _, n := range nodes {
		if v := n.Labels[LabelCNI]; v != "" {
			return v, "node label " + LabelCNI
		}
		for a, cni := range cniAnnotations {
			if _, ok := n.Annotations[a]; ok {
				return cni, "node annotation " + a
			}
		}
	}
	return "", ""
}

var modeRE = regexp.MustCompile(`(?m)^mode:\s*"?([a-z]*)"?`)

// proxyMode reads kube-proxy's mode from its ConfigMap in kube-system (as
// kubeadm writes it); "" when there is none or it says none.
func proxyMode(ctx context.Context, c *Conn) string {
	cm := &corev1.ConfigMap{}
	if err := c.get(ctx, c.core, "kube-system", "configmaps", "kube-proxy", cm); err != nil {
		return ""
	}
	for _, v := range cm.Data {
		if m := modeRE.FindStringSubmatch(v); m != nil {
			if m[1] == "" {
				return "iptables (default)"
			}
			return m[1]
		}
	}
	return ""
}

// recordedFamily is the family the lab's nodes' pod CIDRs say the cluster
// has (clusterFamily on the records).
func recordedFamily(nodes []record.KubeNode) string {
	var ns []corev1.Node
	for _, n := range nodes {
		var cn corev1.Node
		cn.Spec.PodCIDRs = n.PodCIDRs
		ns = append(ns, cn)
	}
	return clusterFamily(ns)
}
