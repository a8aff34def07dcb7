package lab

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
)

// TestPlanKeepsSmallLabs: labs of the sizes that worked before the plan
// grew keep every address.
func TestPlanKeepsSmallLabs(t *testing.T) {
	for i := 1; i <= MacvlanHosts; i++ {
		if ip, bits := MacvlanAddr(i, MacvlanHosts); !ip.Equal(MacvlanIP(i)) || bits != 24 {
			t.Fatalf("host %d of %d: macvlan %s/%d, want %s/24", i, MacvlanHosts, ip, bits, MacvlanIP(i))
		}
	}
	for i := 1; i < 200; i++ {
		if GatewayIndex(i) != i {
			t.Fatalf("host %d: gateway bridge of host %d", i, GatewayIndex(i))
		}
	}
}

// TestPlanBigLabsApart: in a lab of MaxHosts hosts no two of its addresses
// on one segment meet: hosts, macvlan containers and their slots on the
// underlay; overlay containers and their slots on the VXLAN, against each
// container's own gateway bridge.
func TestPlanBigLabsApart(t *testing.T) {
	seen := map[string]string{}
	add := func(ip net.IP, what string) {
		t.Helper()
		if ip == nil || ip[3] == 255 {
			t.Fatalf("%s: no usable address (%s)", what, ip)
		}
		if prev, ok := seen[ip.String()]; ok {
			t.Fatalf("%s and %s share %s", prev, what, ip)
		}
		seen[ip.String()] = what
	}
	for i := 1; i <= MaxHosts; i++ {
		add(UnderlayIP(i), fmt.Sprintf("host %d", i))
		ip, _ := MacvlanAddr(i, MaxHosts)
		add(ip, fmt.Sprintf("host %d's macvlan", i))
	}
	for i := 1; i <= SlotRangeHosts; i++ {
		for k := 1; k < MaxPerHost; k++ {
			add(SlotRangeIP(i, k), fmt.Sprintf("host %d's slot %d", i, k))
		}
	}
	_, overlay, _ := net.ParseCIDR(OverlaySubnet)
	for i := 1; i <= MaxHosts; i++ {
		_, _, subnet := HostBridge(GatewayIndex(i))
		_, gw, _ := net.ParseCIDR(subnet)
		if gw.Contains(overlay.IP) || overlay.Contains(gw.IP) {
			t.Fatalf("host %d's gateway bridge %s is the overlay's %s", i, gw, overlay)
		}
	}
}

// TestClusterRangesApart: a test cluster's Services and pods stay inside
// the benchmarking range and clear of the ranges its lab uses (the
// underlay, the container bridges and overlay, the slots), and every
// node's pod subnet lies in the cluster's pod network.
func TestClusterRangesApart(t *testing.T) {
	bench := netip.MustParsePrefix("198.18.0.0/15")
	used := []string{Underlay, "198.19.0.0/16", SlotRange}
	for _, c := range []string{ClusterServiceCIDR, ClusterPodCIDR} {
		p := netip.MustParsePrefix(c)
		if !bench.Contains(p.Addr()) || p.Bits() < bench.Bits() {
			t.Errorf("%s is outside 198.18.0.0/15", c)
		}
		for _, u := range used {
			if p.Overlaps(netip.MustParsePrefix(u)) {
				t.Errorf("%s overlaps %s", c, u)
			}
		}
	}
	pods := netip.MustParsePrefix(ClusterPodCIDR)
	for i := 1; i <= ClusterMaxNodes; i++ {
		subnet, gw := ClusterNodePods(i)
		p := netip.MustParsePrefix(subnet)
		if !pods.Contains(p.Addr()) || p.Bits() != 24 || !p.Contains(netip.MustParseAddr(gw)) {
			t.Errorf("node %d: pods %s (gateway %s) not a /24 of %s", i, subnet, gw, ClusterPodCIDR)
		}
	}
	if !netip.MustParsePrefix(ClusterServiceCIDR).Contains(netip.MustParseAddr(ClusterServiceAPI)) {
		t.Errorf("%s is not in %s", ClusterServiceAPI, ClusterServiceCIDR)
	}
}
