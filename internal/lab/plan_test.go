package lab

import (
	"fmt"
	"net"
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
