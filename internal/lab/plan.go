package lab

import (
	"fmt"
	"net"
	"strconv"
)

// The address plan shared by every lab, all inside 198.18.0.0/15 (RFC 2544's
// benchmarking range):
//
//	198.18.0.<i>/24      host i's NIC on the underlay
//	198.18.0.<100+i>/24  host i's macvlan container on the underlay
//	198.19.<i>.0/24      host i's container bridge (.1 gateway, .2 container;
//	                     slot k's container .(2+k)); routed modes route it
//	198.19.200.<i>/24    host i's container on the VXLAN overlay
//	198.18.<10+i>.0/24   a chain's segment i, host i .1 and host i+1 .2;
//	                     each host's own 198.18.0.<i> is then on its
//	                     loopback (netns/chain.go)
//	198.18.<128+i>.<k>   host i's slot-k container (k >= 1) on a shared L2
//	                     (macvlan on the underlay, the VXLAN overlay), in
//	                     SlotRange, when a host carries several endpoints
//	198.18.128.<i>/17    host i's macvlan container in a lab of more than
//	                     MacvlanHosts hosts (MacvlanAddr)
//	198.19.0.0/24        host 200's overlay gateway bridge (GatewayIndex)
//	198.19.128.0/17      the real Flannel's network (FlannelNetwork): each
//	                     host's flanneld leases a /24 from 198.19.129.0 to
//	                     198.19.254.0, at random as Flannel does; a
//	                     flannel lab uses no other 198.19 address, and the
//	                     range is the docker driver's swarm pool, which a
//	                     flannel lab does not use, so its engines'
//	                     local pool (198.19.0.0/17) never meets a lease
//	198.18.16.0/20       a test cluster's Services (ClusterServiceCIDR)
//	198.18.64.0/18       a test cluster's pods (ClusterPodCIDR); node i's
//	                     198.18.(64+i).0/24 where cnperf fixes them
//	                     (ClusterNodePods)

// Underlay is the lab's "physical" subnet. Every lab is sealed in its own
// namespaces, so all labs share one address plan without conflict.
const Underlay = "198.18.0.0/24"

// UnderlayIP is the address of the host with the given index (1-based).
func UnderlayIP(index int) net.IP { return net.IPv4(198, 18, 0, byte(index)).To4() }

// UnderlayMTU is the MTU of the emulated hosts' NICs.
const UnderlayMTU = 1500

// HostBridge returns host i's container-bridge gateway and container
// addresses as CIDRs, and the subnet.
func HostBridge(i int) (gw, ctr, subnet string) {
	return fmt.Sprintf("198.19.%d.1/24", i), fmt.Sprintf("198.19.%d.2/24", i), fmt.Sprintf("198.19.%d.0/24", i)
}

// SlotIP is host i's slot-k container address on its container bridge
// (198.19.i.(2+k)): slot 0 is HostBridge's container.
func SlotIP(i, k int) net.IP { return net.IPv4(198, 19, byte(i), byte(2+k)).To4() }

// SlotRange holds the containers past slot 0 of modes that put every
// container on one L2 segment (macvlan, overlay): host i's are
// 198.18.(128+i).k, so at most SlotRangeHosts hosts may carry several.
const (
	SlotRange      = "198.18.128.0/17"
	SlotRangeHosts = 127
)

// SlotRangeIP is host i's slot-k container (k >= 1) in SlotRange.
func SlotRangeIP(i, k int) net.IP { return net.IPv4(198, 18, byte(128+i), byte(k)).To4() }

// MacvlanIP is host i's macvlan container address on the underlay.
func MacvlanIP(i int) net.IP { return net.IPv4(198, 18, 0, byte(100+i)).To4() }

// MacvlanHosts is the most hosts a lab may have for its macvlan
// containers to sit on the underlay's /24 (MacvlanIP): host 101's own
// address is host 1's container's.
const MacvlanHosts = 100

// MacvlanAddr is host i's (slot 0) macvlan container address and prefix
// length in a lab of hosts hosts: MacvlanIP/24 up to MacvlanHosts hosts, as
// always; in a larger lab 198.18.128.i/17 in SlotRange, whose first /24 no
// slot uses (slot k of host i is 198.18.(128+i).k), reached on the link
// as slots past 0 are.
func MacvlanAddr(i, hosts int) (ip net.IP, bits int) {
	if !MacvlanSpread(hosts) {
		return MacvlanIP(i), 24
	}
	return net.IPv4(198, 18, 128, byte(i)).To4(), 17
}

// MacvlanSpread says whether a lab of hosts hosts puts its macvlan
// containers in SlotRange (MacvlanAddr).
func MacvlanSpread(hosts int) bool { return hosts > MacvlanHosts }

// OverlaySubnet is the VXLAN overlay's subnet.
const OverlaySubnet = "198.19.200.0/24"

// OverlayIP is host i's container address on the overlay.
func OverlayIP(i int) net.IP { return net.IPv4(198, 19, 200, byte(i)).To4() }

// GatewayIndex is the index whose HostBridge and SlotIP host i's overlay
// gateway bridge takes: i, but for host 200, whose container bridge
// 198.19.200.0/24 is the overlay's own subnet; it takes 198.19.0.0/24,
// which no host has (hosts count from 1). The gateway bridge is the host's
// own, never routed beyond it, so no other host minds.
func GatewayIndex(i int) int {
	if _, _, subnet := HostBridge(i); subnet == OverlaySubnet {
		return 0
	}
	return i
}

// The real Flannel's network configuration (plan above): FlannelHosts
// leases of /24.
const (
	FlannelNetwork   = "198.19.128.0/17"
	FlannelSubnetMin = "198.19.129.0"
	FlannelSubnetMax = "198.19.254.0"
	FlannelHosts     = 126
)

// HostPort joins an address and a port.
func HostPort(ip string, port int) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }

// IP strips the prefix length from a CIDR (an IPv4 address in its 4-byte
// form).
func IP(cidr string) net.IP {
	ip, _, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil
	}
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip
}

// The test cluster's (cnperf cluster up) ranges: Services and pods, clear
// of the ranges above that a cluster's lab uses (its hosts are a plain
// switch: no chain, no slots).
const (
	ClusterServiceCIDR = "198.18.16.0/20"
	ClusterServiceAPI  = "198.18.16.1" // the kubernetes Service
	// ClusterServiceMore is a second Service range (a ServiceCIDR object),
	// so that the cluster holds the services condition's thousands.
	ClusterServiceMore = "198.18.32.0/19"
	ClusterPodCIDR     = "198.18.64.0/18"
	// ClusterMaxNodes is what ClusterPodCIDR holds as a /24 per node.
	ClusterMaxNodes = 60
)

// ClusterNodePods is node i's (1-based) pod subnet and its gateway, where
// cnperf fixes them (the bridge CNI with routes between nodes).
func ClusterNodePods(i int) (subnet, gateway string) {
	return fmt.Sprintf("198.18.%d.0/24", 64+i), fmt.Sprintf("198.18.%d.1", 64+i)
}

// ClusterDaemonCgroup is the cgroup (under every v1 controller) of a test
// cluster's daemon on one of its hosts: cnperf/CLUSTER/HOST/daemons/DAEMON
// (containerd, kubelet, kube-proxy, flanneld, cilium-agent, ...). Each
// daemon has its own, with what it forks (iptables-restore, clang), so
// that what a CNI's agent or kube-proxy spends during a cell is read
// apart from the kubelet's and the pods'.
func ClusterDaemonCgroup(cluster, host, daemon string) string {
	return "cnperf/" + cluster + "/" + host + "/daemons/" + daemon
}

// The IPv6 plan (ip_family ipv6 or dual), all inside RFC 5180's
// benchmarking prefix 2001:2::/48, a /64 per segment whose fourth group
// echoes the IPv4 plan in decimal digits, so that 198.19.3.2 reads as
// 2001:2:0:1003::2:
//
//	2001:2::<i>/64            host i's NIC on the underlay
//	2001:2::<100+i>/64        host i's macvlan container on the underlay
//	2001:2:0:<1000+i>::/64    host i's container bridge (::1 gateway, ::2
//	                          container, slot k's ::(2+k)); routed modes
//	                          route it
//	2001:2:0:2000::<i>/64     host i's container on the VXLAN overlay
//	2001:2:0:<10+i>::/64      a chain's segment i, host i ::1 and i+1 ::2
//	2001:2:0:0-7fff::/49      the netns driver's labs (all of the above)
//	2001:2:0:8000::/49        a test cluster's pods and Services
//
// Every group is written in decimal digits read as hexadecimal, so the
// plan holds host indexes up to 9999 per group (labs have at most 255).

// UnderlayPrefix6 is the lab's "physical" IPv6 subnet.
const UnderlayPrefix6 = "2001:2::/64"

// UnderlayIP6 is host i's IPv6 address on the underlay.
func UnderlayIP6(i int) net.IP { return net.ParseIP(fmt.Sprintf("2001:2::%d", i)) }

// MacvlanIP6 is host i's macvlan container's IPv6 address on the underlay.
func MacvlanIP6(i int) net.IP { return net.ParseIP(fmt.Sprintf("2001:2::%d", 100+i)) }

// HostBridge6 returns host i's container-bridge gateway and container
// IPv6 addresses as CIDRs, and the subnet (HostBridge's IPv6 twin).
func HostBridge6(i int) (gw, ctr, subnet string) {
	p := fmt.Sprintf("2001:2:0:%d::", 1000+i)
	return p + "1/64", p + "2/64", p + "/64"
}

// SlotIP6 is host i's slot-k container IPv6 address on its container
// bridge (SlotIP's twin): slot 0 is HostBridge6's container.
func SlotIP6(i, k int) net.IP { return net.ParseIP(fmt.Sprintf("2001:2:0:%d::%d", 1000+i, 2+k)) }

// OverlaySubnet6 is the VXLAN overlay's IPv6 subnet; OverlayIP6 host i's
// container on it.
const OverlaySubnet6 = "2001:2:0:2000::/64"

func OverlayIP6(i int) net.IP { return net.ParseIP(fmt.Sprintf("2001:2:0:2000::%d", i)) }

// OverlaySlotIP6 is host i's slot-k container (k >= 1) on the overlay
// (SlotRangeIP's twin: 198.18.(128+i).k reads 2001:2:0:2000::<128+i>:<k>);
// OverlaySubnet6 holds every host's, so no route is needed between them.
func OverlaySlotIP6(i, k int) net.IP {
	return net.ParseIP(fmt.Sprintf("2001:2:0:2000::%d:%d", 128+i, k))
}

// ChainSegment6 is a chain's segment i (IPv6) and its two ends: host i
// and host i+1.
func ChainSegment6(i int) (subnet string, left, right net.IP) {
	p := fmt.Sprintf("2001:2:0:%d::", 10+i)
	return p + "/64", net.ParseIP(p + "1"), net.ParseIP(p + "2")
}

// ClusterRange6 is where a test cluster's IPv6 pod and Service ranges lie,
// clear of the netns driver's labs (2001:2:0:0-7fff::).
const ClusterRange6 = "2001:2:0:8000::/49"

// MacvlanSlotIP6 is host i's slot-k macvlan container (k >= 1) on the
// underlay /64 (SlotRangeIP's twin: 198.18.(128+i).k reads
// 2001:2::<128+i>:<k>); the /64 holds every host's, so no route is needed.
func MacvlanSlotIP6(i, k int) net.IP {
	return net.ParseIP(fmt.Sprintf("2001:2::%d:%d", 128+i, k))
}

// MacvlanAddr6 is host i's (slot 0) macvlan container IPv6 address in a
// lab of hosts hosts: MacvlanIP6 up to MacvlanHosts hosts, else
// 2001:2::128:<i> (MacvlanAddr's 198.18.128.i), clear of host 100+i's
// own ::<100+i>. The prefix is always the underlay's /64.
func MacvlanAddr6(i, hosts int) net.IP {
	if !MacvlanSpread(hosts) {
		return MacvlanIP6(i)
	}
	return net.ParseIP(fmt.Sprintf("2001:2::128:%d", i))
}

// LinkLocal6 is the link-local address a lab gives a device that
// forwards IPv6 (a host's NIC, a routed mode's gateway): lab namespaces
// generate none (namespace.EnableIPv6), and a router needs one to solicit
// its neighbours for packets it forwards. Host i's NIC is fe80::<i>, a
// gateway toward containers fe80::1.
func LinkLocal6(i int) string { return fmt.Sprintf("fe80::%d/64", i) }

// The test cluster's IPv6 ranges (cnperf cluster up --ip-family dual),
// inside ClusterRange6, in the IPv4 plan's style: node i's pods get
// 2001:2:0:<8100+i>::/64 (the fourth group the node's index in decimal
// digits read as hexadecimal), its bridge ::1.
const (
	// ClusterServiceCIDR6 is a /108: the API server takes no IPv6 Service
	// range with more than 20 host bits.
	ClusterServiceCIDR6 = "2001:2:0:8010::/108"
	ClusterServiceAPI6  = "2001:2:0:8010::1"
	// ClusterPodCIDR6 holds a /64 per node (the controller-manager's
	// --node-cidr-mask-size-ipv6), ClusterMaxNodes of them and more.
	ClusterPodCIDR6 = "2001:2:0:8100::/56"
)

// ClusterNodePods6 is node i's (1-based) IPv6 pod subnet and its gateway,
// ClusterNodePods' twin.
func ClusterNodePods6(i int) (subnet, gateway string) {
	p := fmt.Sprintf("2001:2:0:%d::", 8100+i)
	return p + "/64", p + "1"
}
