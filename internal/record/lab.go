package record

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Lab is what a run stores of a lab: its hosts, endpoints and how it was
// built.
type Lab struct {
	Name      string     `json:"name"`
	Mode      string     `json:"mode"`
	Switch    string     `json:"switch_netns"`
	Hosts     []Host     `json:"hosts"`
	Endpoints []Endpoint `json:"endpoints"`
	// Publish lists the ports a mode with NAT publishes, like docker -p:
	// the endpoint's port over TCP first, then Config.Publish.
	Publish []Port `json:"publish"`
	Driver  string `json:"driver"`
	// Local is set for a lab on an engine cnperf did not start
	// (--docker-host): every host is this machine, reached on loopback.
	Local      bool   `json:"local,omitempty"`
	DockerHost string `json:"docker_host,omitempty"`
	// Conditions are the conditions the lab was built under.
	Conditions conditions.Set `json:"conditions,omitzero"`
	// IPFamily is the address family the lab was built with and its
	// workloads dialled (ipv6 or dual; absent on IPv4 labs), for reports
	// to label.
	IPFamily string `json:"ip_family,omitempty"`
	// TCPCongestion is the congestion control every TCP connection in the
	// lab uses, and TCPCongestionVia how the lab set it: "sysctl" (each
	// namespace's default) or "route" (a metric on every route, for a
	// control the machine restricts to its root namespace).
	TCPCongestion    string `json:"tcp_congestion,omitempty"`
	TCPCongestionVia string `json:"tcp_congestion_via,omitempty"`
	// Topology is the shape the lab was asked for: hosts and the roles of
	// the endpoints on each (absent in runs before it was recorded).
	Topology *Topology `json:"topology,omitempty"`
	Zones    *Zones    `json:"zones,omitempty"` // zone_* conditions: what delayed, and the delay line's counters (zones.go)
	// Chain is the underlay of a chained topology: its segments and
	// whether the hosts route between them (chain.go).
	Chain *Chain `json:"chain,omitempty"`
	// Links are the spec's impaired links as built (links.go).
	Links []ImpairedLink `json:"links,omitempty"`
	// Kube is set on the kubernetes driver: the cluster and its nodes.
	Kube *Kube `json:"kubernetes,omitempty"`
	// Flannel is set by the flannel modes: the real flanneld's version,
	// backend, MTU, etcd and leases (flannel.go).
	Flannel *Flannel `json:"flannel,omitempty"`
}

// Topology describes a lab as data: its hosts, in order (host i gets the
// address plan's index i+1), and on each the workload's endpoints by role.
type Topology struct {
	Hosts []HostSpec `json:"hosts"`
	// Chain lays the hosts in a line, in this order: each reaches only its
	// neighbours, over a link of its own (Zismer's (2016) hop chain); the
	// driver records the segments in Lab.Chain.
	Chain bool `json:"chain,omitempty"`
}

// HostSpec is one host of a topology. A host without endpoints is a
// client outside the cluster (ping-pong's siege): the mode builds nothing
// on it.
type HostSpec struct {
	Name      string         `json:"name"`
	Endpoints []EndpointSpec `json:"endpoints,omitempty"`
}

// EndpointSpec is one endpoint (a container, or the host itself in bare
// mode) and the workload role that runs in it: ping, pong, client, server.
type EndpointSpec struct {
	Role string `json:"role"`
}

// Host is one emulated host.
type Host struct {
	Name  string `json:"name"`
	Index int    `json:"index"` // 1-based; fixes the host's addresses
	NS    string `json:"netns"`
	Addr  string `json:"addr"` // underlay address of eth0 (IPv4; "" on an IPv6-only lab)
	// Addr6 is eth0's IPv6 underlay address on a lab with IPv6 (ip_family
	// ipv6 or dual).
	Addr6 string `json:"addr6,omitempty"`
	// Kube is set on the kubernetes driver: the host is a pod (a client
	// with no server, like ping-pong's siege) on a node.
	Kube *KubePod `json:"kubernetes,omitempty"`
}

// Endpoint is where a server process runs in a mode and how it is reached.
type Endpoint struct {
	// Role is the topology's role this endpoint plays (absent in runs
	// before roles were recorded, where the host's name said it).
	Role      string `json:"role,omitempty"`
	Host      string `json:"host"`
	NS        string `json:"netns"`     // namespace the process runs in
	Container bool   `json:"container"` // own cgroup and pid/uts/ipc/mount namespaces
	Listen    string `json:"listen"`    // address the process listens on
	External  string `json:"external"`  // host:port a client outside the cluster dials
	Internal  string `json:"internal"`  // host:port a peer inside the cluster dials
	// External4 and Internal4 are the IPv4 twins of External and Internal
	// on a dual-stack lab, where those two carry the IPv6 addresses that
	// the workloads dial: a run says both.
	External4 string   `json:"external4,omitempty"`
	Internal4 string   `json:"internal4,omitempty"`
	Path      []string `json:"path"` // the devices a packet crosses, for people
	// PortShift is added to every port of the lab at this endpoint: where
	// its servers listen, are published and are dialled (Listen, External
	// and Internal carry it for the lab's port). A host's k-th endpoint
	// (from 0) shifts by k times the span of the lab's ports, so endpoints
	// sharing the host's stack or its published ports stay apart.
	PortShift int `json:"port_shift,omitempty"`
	// Router is set when a user-space overlay router carries the endpoint's
	// traffic.
	Router *RouterInfo `json:"router,omitempty"`
	// Docker is set on the docker driver: the endpoint is a sandbox
	// container on the host's engine.
	Docker *DockerEndpoint `json:"docker,omitempty"`
	// Kube is set on the kubernetes driver: the endpoint is a pod.
	Kube *KubePod `json:"kubernetes,omitempty"`
}

// RouterInfo describes a user-space overlay router: its kind (udp or
// wireguard), TUN device, MTU, UDP port and cipher.
type RouterInfo struct {
	Kind   string `json:"kind"`
	TUN    string `json:"tun"`
	MTU    int    `json:"mtu"`
	Port   int    `json:"port"`
	Cipher string `json:"cipher"`
}

// DockerEndpoint says where an endpoint lives on the docker driver: the
// engine, its sandbox container (servers run in its network namespace) and
// the network it is attached to, as the engine describes them.
type DockerEndpoint struct {
	DockerHost   string       `json:"docker_host"`
	Version      string       `json:"engine_version"`
	API          string       `json:"api_version"`
	Sandbox      string       `json:"sandbox"`
	SandboxPID   int          `json:"sandbox_pid"`
	Image        string       `json:"image"`
	CgroupParent string       `json:"cgroup_parent,omitempty"`
	Network      *NetworkInfo `json:"network,omitempty"`
}

// Where says, in lines for people (`cnperf lab up`), where the endpoint
// lives on its driver, as the driver's parts of its record word it.
func (e Endpoint) Where() []string {
	var out []string
	if e.Docker != nil {
		out = append(out, fmt.Sprintf("docker -H %s (engine %s), sandbox %.12s", e.Docker.DockerHost, e.Docker.Version, e.Docker.Sandbox))
	}
	if k := e.Kube; k != nil {
		out = append(out, fmt.Sprintf("kubectl -n %s exec %s -- /cnperf ... (node %s, pod IP %s)", k.Namespace, k.Pod, k.Node, k.PodIP))
	}
	return out
}

// Built says how driver built the lab, for a report's caption, as the
// driver's part of its record words it; a lab with none is namespaces
// built by hand.
func (l Lab) Built(driver string) string {
	switch {
	case len(l.Endpoints) > 0 && l.Endpoints[0].Docker != nil:
		return "on real Docker Engines (" + driver + ")"
	case l.Kube != nil:
		return "on " + driver
	}
	return "built by hand in network namespaces (" + driver + ")"
}

// Port is a port number and its protocol ("tcp" or "udp").
type Port struct {
	Number   int    `json:"port"`
	Protocol string `json:"protocol"`
}
