package record

// Flannel is what a lab running the real Flannel (flanneld with etcd, as
// Zismer (2016) set it up) was built with, as flanneld and etcd said it:
// the version the binary reports, the backend, the MTU its subnet.env
// gave the containers, where etcd listened, and each host's lease.
type Flannel struct {
	Version string `json:"version"`
	Backend string `json:"backend"` // vxlan, udp or host-gw
	// Network is the configuration's network, which the leases are cut
	// from; MTU is subnet.env's FLANNEL_MTU (the same on every host).
	Network string `json:"network"`
	MTU     int    `json:"mtu"`
	// Port is the backend's UDP port (VXLAN's as the device says, or the
	// udp backend's), 0 for host-gw; VNI is the VXLAN's.
	Port int `json:"port,omitempty"`
	VNI  int `json:"vni,omitempty"`
	// Etcd is the client URL the flanneld instances were given.
	Etcd   string         `json:"etcd"`
	Leases []FlannelLease `json:"leases"`
}

// FlannelLease is one host's subnet as its flanneld leased it.
type FlannelLease struct {
	Host   string `json:"host"`
	Subnet string `json:"subnet"` // e.g. 198.19.150.0/24
}
