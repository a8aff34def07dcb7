package workload

import (
	"net"
	"testing"
)

// TestFitMTU: over IPv6 sizes are fitted to the interface's MTU less the
// IPv6 header's extra 20 bytes, over IPv4 to the MTU itself.
func TestFitMTU(t *testing.T) {
	v4 := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	v6 := &net.UDPAddr{IP: net.IPv6loopback}
	mtu := LocalMTU(v4)
	if mtu == 0 {
		t.Skip("no loopback MTU here")
	}
	if got := FitMTU(v4); got != mtu {
		t.Errorf("IPv4: %d, want %d", got, mtu)
	}
	if LocalMTU(v6) == 0 {
		t.Skip("no ::1 here")
	}
	if got := FitMTU(v6); got != LocalMTU(v6)-IPv6Extra {
		t.Errorf("IPv6: %d, want %d", got, LocalMTU(v6)-IPv6Extra)
	}
	if got := FitMTU(&net.UDPAddr{IP: net.ParseIP("2001:2::dead")}); got != 0 {
		t.Errorf("an address no interface holds: %d, want 0", got)
	}
}
