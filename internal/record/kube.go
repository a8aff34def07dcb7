package record

import "time"

// Kube describes a lab on a Kubernetes cluster: where it ran and what the
// cluster's nodes and network were, so a run can be compared with another
// cluster's years later.
type Kube struct {
	// Server is the API server's URL, Context the kubeconfig context used
	// ("" in-cluster), Version the API server's version.
	Server    string `json:"server"`
	Context   string `json:"context,omitempty"`
	Version   string `json:"version"`
	Namespace string `json:"namespace"` // the lab's own namespace
	// Placement is "same-node" or "cross-node": whether the lab's hosts
	// share one node or each has its own.
	Placement string `json:"placement"`
	// CNI names the cluster's pod network as cnperf found it: a known
	// plugin's daemonset in kube-system, or what a node's CNI config says
	// (empty when neither told).
	CNI       string `json:"cni,omitempty"`
	CNIFrom   string `json:"cni_from,omitempty"`
	ProxyMode string `json:"kube_proxy_mode,omitempty"` // kube-proxy's configured mode ("" default: iptables)
	// CNIBackend is the pod network's own backend as the cluster says it
	// (flannel's node annotation backend-type: vxlan, udp, host-gw), and
	// PodMTU the MTU of a pod's eth0 as the CNI set it, read inside one
	// of the lab's pods (0: none measured, or no pod-network pod).
	CNIBackend string `json:"cni_backend,omitempty"`
	PodMTU     int    `json:"pod_mtu,omitempty"`
	// IPFamily is ipv4, ipv6 or dual as the lab's nodes' pod CIDRs say
	// (empty: no node had one).
	IPFamily string `json:"ip_family,omitempty"`
	// Cilium is what a Cilium pod network says of itself in its
	// cilium-config ConfigMap (nil on other networks).
	Cilium     *KubeCilium `json:"cilium,omitempty"`
	Image      string      `json:"image"`
	PullPolicy string      `json:"image_pull_policy"`
	Nodes      []KubeNode  `json:"nodes"`
	// Cluster is the name, in the spec's kubernetes.clusters, of the
	// cluster the lab was on, when the spec listed several (Server and
	// Context say how it was reached).
	Cluster string `json:"cluster,omitempty"`
	// Policy is the NetworkPolicy the lab's namespace held while it was
	// measured ("allow": one policy over the lab's pods; empty: none) and
	// PolicyRules its ingress rules, of which one matched the clients.
	Policy      string `json:"network_policy,omitempty"`
	PolicyRules int    `json:"policy_rules,omitempty"`
	// PolicyProbe is what probing the lab's pods found before the policy
	// was applied: whether a deny policy was enforced, and how fast.
	PolicyProbe *PolicyProbe `json:"policy_probe,omitempty"`
	// Services is what the services condition put on the cluster and
	// measured before the lab's first cell (services.go).
	Services *KubeServices `json:"services,omitempty"`
}

// PolicyProbe is one enforcement probe: a client pod dials a server pod's
// port every Every while a deny-all-ingress policy is created (Deny: the
// time from its creation until a dial failed) and deleted (Undeny: from
// its deletion until a dial passed again), each waited for up to Bound;
// then, with the lab's own policy, Apply is the time from its creation
// until a port it does not allow was refused: the policy in force before
// the first cell.
// A deny that still passed at Bound is "not enforced" (Enforced false,
// Deny 0). Note says why a lab was not probed (its pods on the nodes'
// network, where NetworkPolicies do not apply).
type PolicyProbe struct {
	Enforced bool          `json:"enforced"`
	Deny     time.Duration `json:"deny_ns,omitempty"`
	Undeny   time.Duration `json:"undeny_ns,omitempty"`
	Apply    time.Duration `json:"apply_ns,omitempty"`
	Every    time.Duration `json:"every_ns,omitempty"`
	Bound    time.Duration `json:"bound_ns,omitempty"`
	From     string        `json:"from,omitempty"` // client pod
	To       string        `json:"to,omitempty"`   // server pod:port
	Note     string        `json:"note,omitempty"`
}

// KubeNode is a node the lab ran on, as its status describes it.
type KubeNode struct {
	Name             string            `json:"name"`
	Addresses        map[string]string `json:"addresses"` // InternalIP, Hostname, ...
	Kernel           string            `json:"kernel"`
	OS               string            `json:"os_image"`
	Kubelet          string            `json:"kubelet"`
	KubeProxy        string            `json:"kube_proxy,omitempty"`
	ContainerRuntime string            `json:"container_runtime"`
	Arch             string            `json:"arch"`
	CPU              string            `json:"cpu"`    // capacity
	Memory           string            `json:"memory"` // capacity
	PodCIDRs         []string          `json:"pod_cidrs,omitempty"`
}

// KubePod says where an endpoint (or a host's pod) lives on the kubernetes
// driver.
type KubePod struct {
	Namespace   string `json:"namespace"`
	Pod         string `json:"pod"`
	Node        string `json:"node"`
	PodIP       string `json:"pod_ip"`
	HostIP      string `json:"host_ip"`
	HostNetwork bool   `json:"host_network,omitempty"`
	// Service is set when peers dial a Service: its kind (ClusterIP,
	// NodePort), name and cluster IP.
	Service     string `json:"service,omitempty"`
	ServiceType string `json:"service_type,omitempty"`
	ClusterIP   string `json:"cluster_ip,omitempty"`
}

// KubeCilium is a Cilium pod network as its cilium-config ConfigMap (what
// Helm installs and the agents read) and its version say.
type KubeCilium struct {
	// Version is Cilium's release (1.20.2), from cilium-config's
	// app.kubernetes.io/version label or the cilium DaemonSet's image
	// tag, as VersionFrom says.
	Version     string `json:"version,omitempty"`
	VersionFrom string `json:"version_from,omitempty"`
	// RoutingMode is tunnel or native, TunnelProtocol vxlan or geneve in
	// tunnel mode.
	RoutingMode    string `json:"routing_mode,omitempty"`
	TunnelProtocol string `json:"tunnel_protocol,omitempty"`
	// KubeProxyReplacement is cilium-config's kube-proxy-replacement
	// (true, false), SocketLB its bpf-lb-sock, IPAM its ipam mode.
	KubeProxyReplacement string `json:"kube_proxy_replacement,omitempty"`
	SocketLB             string `json:"socket_lb,omitempty"`
	IPAM                 string `json:"ipam,omitempty"`
	// FeaturesOff are the enable-* and feature keys cilium-config sets to
	// false, sorted; FeaturesOffWhy why, where the cluster says (the test
	// cluster's cnperf.io/cilium-off-why annotation).
	FeaturesOff    []string          `json:"features_off,omitempty"`
	FeaturesOffWhy map[string]string `json:"features_off_why,omitempty"`
}
