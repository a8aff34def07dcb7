package record

import "time"

// KubeServices is what a lab of the services condition found on its
// cluster before its first cell: the Services that filled the cluster's
// table, how long they took to create, the programming latency of one
// more Service, and what kube-proxy or the CNI's agent made and spent.
type KubeServices struct {
	// N is the filler Services (each with an endpoint) the cluster held
	// while the lab was measured, Created those this lab added (the rest
	// were an earlier lab's on the same cluster), CreateNS how long
	// creating them took, Batch how many were created at once, and
	// ClusterServices every Service the cluster held (the API server's
	// count, approximate on a large list).
	N               int           `json:"n"`
	Created         int           `json:"created"`
	CreateNS        time.Duration `json:"create_ns,omitempty"`
	Batch           int           `json:"batch,omitempty"`
	ClusterServices int           `json:"cluster_services,omitempty"`
	// SettleNS is the time from the last filler's creation until a client
	// pod reached it: the table programmed.
	SettleNS time.Duration `json:"settle_ns,omitempty"`
	// ProgrammingNS are the programming latencies: for each probe Service
	// (created with a ready endpoint, then deleted), the time from its
	// create request until a client pod's first connection to its
	// ClusterIP passed; Failed counts those not passing within BoundNS.
	ProgrammingNS []time.Duration `json:"programming_ns,omitempty"`
	Failed        int             `json:"programming_failed,omitempty"`
	BoundNS       time.Duration   `json:"bound_ns,omitempty"`
	From          string          `json:"from,omitempty"` // client pod
	To            string          `json:"to,omitempty"`   // server pod:port
	// Nodes are the rules and map entries on each node of the lab's once
	// the probes were done (test cluster only).
	Nodes []NodeRules `json:"nodes,omitempty"`
	// Syncs and SyncSeconds are what kube-proxy's metrics
	// (kubeproxy_sync_proxy_rules_duration_seconds) counted on the lab's
	// nodes from before the fillers to after the probes.
	Syncs       int64   `json:"kube_proxy_syncs,omitempty"`
	SyncSeconds float64 `json:"kube_proxy_sync_seconds,omitempty"`
	// Daemons is what the nodes' daemons spent over the same span.
	Daemons map[string]DaemonCost `json:"daemons,omitempty"`
	// Notes say what could not be measured, and why.
	Notes []string `json:"notes,omitempty"`
}

// NodeRules counts a node's datapath state: the lines of iptables-save
// that are rules (all tables), the nftables rules and set or map elements,
// and the entries of Cilium's Service map (lb4_services), -1 where not read.
type NodeRules struct {
	Node       string `json:"node"`
	Iptables   int    `json:"iptables_rules"`
	Nft        int    `json:"nft_rules"`
	NftElems   int    `json:"nft_elements"`
	CiliumLB   int    `json:"cilium_lb_entries"`
	ReadFailed string `json:"note,omitempty"`
}
