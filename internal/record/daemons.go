package record

// The roles of a cluster's node daemons whose cost a cell records: the
// pod network's agent (flanneld, cilium-agent), its operator where it has
// one (cilium-operator, one per cluster), kube-proxy, the kubelet and the
// container runtime.
const (
	DaemonCNIAgent    = "cni-agent"
	DaemonCNIOperator = "cni-operator"
	DaemonKubeProxy   = "kube-proxy"
	DaemonKubelet     = "kubelet"
	DaemonContainerd  = "containerd"
)

// DaemonCost is what one role's daemons spent over a cell, summed over
// the nodes read.
type DaemonCost struct {
	// Names are the daemons read (flanneld; cilium-agent), Nodes how many
	// nodes' were summed.
	Names []string `json:"names,omitempty"`
	Nodes int      `json:"nodes"`
	// Source says how they were read: "cgroup" (the test cluster's own
	// cgroups, counting what the daemons fork: iptables-restore, clang) or
	// "metrics.k8s.io" (the pods' metrics, a rate over WindowSeconds that
	// ended near the cell's end, times the cell's duration: coarse).
	Source        string  `json:"source"`
	WindowSeconds float64 `json:"window_seconds,omitempty"`
	// CPUSeconds is the CPU (user + system) spent during the cell,
	// CPUPercent that of one core over the cell's wall time.
	CPUSeconds float64 `json:"cpu_seconds"`
	CPUPercent float64 `json:"cpu_percent"`
	// MemoryBytes is the working set at the cell's end: memory in use
	// less inactive file cache, as the kubelet and metrics-server count
	// it.
	MemoryBytes int64 `json:"memory_bytes"`
}
