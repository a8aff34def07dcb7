package lab

import (
	"net"
	"strconv"
	"testing"
)

// TestOverlaySlotIP6: every host's slots past 0 sit in the overlay's /64,
// apart from each other and from every host's slot 0 (OverlayIP6), so
// the overlay needs no route between them.
func TestOverlaySlotIP6(t *testing.T) {
	_, subnet, err := net.ParseCIDR(OverlaySubnet6)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	add := func(ip net.IP, what string) {
		if ip == nil || ip.To4() != nil || !subnet.Contains(ip) {
			t.Fatalf("%s: %v is not in %s", what, ip, OverlaySubnet6)
		}
		if prev, ok := seen[ip.String()]; ok {
			t.Fatalf("%s and %s are both %s", prev, what, ip)
		}
		seen[ip.String()] = what
	}
	for i := 1; i <= MaxHosts; i++ {
		add(OverlayIP6(i), "host "+strconv.Itoa(i)+" slot 0")
		for _, k := range []int{1, 2, MaxPerHost - 1} {
			add(OverlaySlotIP6(i, k), "host "+strconv.Itoa(i)+" slot "+strconv.Itoa(k))
		}
	}
	if got := OverlaySlotIP6(3, 2).String(); got != "2001:2:0:2000::131:2" {
		t.Errorf("host 3 slot 2 is %s, want 2001:2:0:2000::131:2", got)
	}
}
