package overlay

import (
	"fmt"
	"net"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// TestTunnel: the VXLAN runs over IPv6 wherever the lab has IPv6 (dual
// too), which costs 20 bytes more of header: 1430 on a 1500-byte underlay.
func TestTunnel(t *testing.T) {
	for _, c := range []struct {
		family string
		v6     bool
		mtu    int
	}{
		{"", false, 1450},
		{conditions.IPv4, false, 1450},
		{conditions.IPv6, true, 1430},
		{conditions.Dual, true, 1430},
	} {
		v6, overhead := Tunnel(conditions.Set{IPFamily: c.family})
		if v6 != c.v6 || lab.UnderlayMTU-overhead != c.mtu {
			t.Errorf("%q: over IPv6 %v, MTU %d; want %v, %d", c.family, v6, lab.UnderlayMTU-overhead, c.v6, c.mtu)
		}
	}
}

// TestVTEPs: a host's tunnel end and one FDB peer per other host, in the
// tunnel's family.
func TestVTEPs(t *testing.T) {
	var hosts []lab.Host
	for i := 1; i <= 3; i++ {
		hosts = append(hosts, lab.Host{Name: fmt.Sprint("h", i), Index: i, Addr: lab.UnderlayIP(i).String(), Addr6: lab.UnderlayIP6(i).String()})
	}
	for _, c := range []struct {
		v6    bool
		local string
		peers string
	}{
		{false, "198.18.0.2", "[198.18.0.1 198.18.0.3]"},
		{true, "2001:2::2", "[2001:2::1 2001:2::3]"},
	} {
		local, remotes := VTEPs(hosts, hosts[1], c.v6)
		if local.String() != c.local || fmt.Sprint(remotes) != c.peers {
			t.Errorf("IPv6 %v: local %s, peers %v; want %s, %s", c.v6, local, remotes, c.local, c.peers)
		}
		if !c.v6 && len(local) != net.IPv4len {
			t.Errorf("IPv4 local %s in %d bytes, want 4 (netlink picks the attribute by length)", local, len(local))
		}
	}
}

// TestOverlayAddrs: a container's overlay addresses, IPv4 first where the
// lab has it; IPv6 slots share the overlay's /64 and need no route.
func TestOverlayAddrs(t *testing.T) {
	h := lab.Host{Name: "h3", Index: 3}
	for _, c := range []struct {
		family string
		slot   int
		cidrs  string
		onLink string
	}{
		{conditions.IPv4, 0, "[198.19.200.3/24]", lab.SlotRange},
		{conditions.IPv4, 2, "[198.18.131.2/17]", lab.OverlaySubnet},
		{conditions.IPv6, 0, "[2001:2:0:2000::3/64]", ""},
		{conditions.IPv6, 2, "[2001:2:0:2000::131:2/64]", ""},
		{conditions.Dual, 0, "[198.19.200.3/24 2001:2:0:2000::3/64]", lab.SlotRange},
		{conditions.Dual, 1, "[198.18.131.1/17 2001:2:0:2000::131:1/64]", lab.OverlaySubnet},
	} {
		ips, cidrs, onLink, err := overlayAddrs(conditions.Set{IPFamily: c.family}, h, c.slot)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(cidrs) != c.cidrs || onLink != c.onLink {
			t.Errorf("%s slot %d: %v on link %q; want %s, %q", c.family, c.slot, cidrs, onLink, c.cidrs, c.onLink)
		}
		if (ips.V6 != nil) != (c.family != conditions.IPv4) || (ips.V4 != nil) != (c.family != conditions.IPv6) {
			t.Errorf("%s slot %d: addresses %+v", c.family, c.slot, ips)
		}
	}
	if _, _, _, err := overlayAddrs(conditions.Set{}, lab.Host{Name: "h200", Index: 200}, 1); err == nil {
		t.Error("slot 1 on host 200: no error")
	}
}
