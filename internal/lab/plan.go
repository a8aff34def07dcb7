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

// OverlaySubnet is the VXLAN overlay's subnet.
const OverlaySubnet = "198.19.200.0/24"

// OverlayIP is host i's container address on the overlay.
func OverlayIP(i int) net.IP { return net.IPv4(198, 19, 200, byte(i)).To4() }

// HostPort joins an address and a port.
func HostPort(ip string, port int) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }

// IP strips the prefix length from a CIDR.
func IP(cidr string) net.IP {
	ip, _, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil
	}
	return ip.To4()
}
