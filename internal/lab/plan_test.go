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
	for _, c := range []string{ClusterServiceCIDR, ClusterServiceMore, ClusterPodCIDR} {
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

func TestIPv6PlanStaysInTheBenchmarkingPrefix(t *testing.T) {
	bench := netip.MustParsePrefix("2001:2::/48")
	netnsLabs := netip.MustParsePrefix("2001:2::/49")
	in := func(what string, ip net.IP) {
		t.Helper()
		a, ok := netip.AddrFromSlice(ip)
		if !ok || !a.Is6() || !bench.Contains(a) || !netnsLabs.Contains(a) {
			t.Errorf("%s = %v: outside 2001:2::/49", what, ip)
		}
	}
	for _, i := range []int{1, 2, 99, 200, 255} {
		in("UnderlayIP6", UnderlayIP6(i))
		in("MacvlanIP6", MacvlanIP6(i))
		in("SlotIP6", SlotIP6(i, 3))
		in("OverlayIP6", OverlayIP6(i))
		gw, ctr, subnet := HostBridge6(i)
		for _, c := range []string{gw, ctr, subnet} {
			p, err := netip.ParsePrefix(c)
			if err != nil || p.Bits() != 64 {
				t.Fatalf("HostBridge6(%d) gives %q: %v", i, c, err)
			}
			in("HostBridge6", p.Addr().AsSlice())
		}
		s, l, r := ChainSegment6(i)
		in("ChainSegment6 left", l)
		in("ChainSegment6 right", r)
		if p := netip.MustParsePrefix(s); !p.Contains(netip.MustParseAddr(l.String())) {
			t.Errorf("chain segment %s lacks %v", s, l)
		}
	}
	if got := SlotIP6(3, 0).String(); got != "2001:2:0:1003::2" {
		t.Errorf("SlotIP6(3, 0) = %s, want the IPv4 plan's 198.19.3.2 echoed", got)
	}
	if !UnderlayIP6(101).Equal(MacvlanIP6(1)) {
		// As in the IPv4 plan, host 101's address is host 1's macvlan
		// container's: labs with macvlan have at most MacvlanHosts hosts.
		t.Errorf("UnderlayIP6(101) and MacvlanIP6(1) should be the same address, as in the IPv4 plan")
	}
	cl := netip.MustParsePrefix(ClusterRange6)
	if cl.Overlaps(netnsLabs) || !bench.Overlaps(cl) {
		t.Errorf("ClusterRange6 %s overlaps the netns labs or leaves the benchmarking prefix", cl)
	}
}

// TestIPv6UnderlayApart: on the underlay's /64 no two of a big lab's IPv6
// addresses meet: hosts, macvlan containers (MacvlanAddr6) and their
// slots, all inside the underlay prefix, so no route is needed between
// them.
func TestIPv6UnderlayApart(t *testing.T) {
	under := netip.MustParsePrefix(UnderlayPrefix6)
	for _, hosts := range []int{MacvlanHosts, MaxHosts} {
		seen := map[string]string{}
		add := func(ip net.IP, what string) {
			t.Helper()
			a, ok := netip.AddrFromSlice(ip)
			if !ok || !under.Contains(a) {
				t.Fatalf("%d hosts: %s = %v: not on the underlay %s", hosts, what, ip, under)
			}
			if prev, ok := seen[a.String()]; ok {
				t.Fatalf("%d hosts: %s and %s share %s", hosts, prev, what, a)
			}
			seen[a.String()] = what
		}
		for i := 1; i <= hosts; i++ {
			add(UnderlayIP6(i), fmt.Sprintf("host %d", i))
			add(MacvlanAddr6(i, hosts), fmt.Sprintf("host %d's macvlan", i))
		}
		for i := 1; i <= SlotRangeHosts; i++ {
			for k := 1; k < MaxPerHost; k += 7 {
				add(MacvlanSlotIP6(i, k), fmt.Sprintf("host %d's slot %d", i, k))
			}
		}
	}
	if got := MacvlanSlotIP6(2, 5).String(); got != "2001:2::130:5" {
		t.Errorf("MacvlanSlotIP6(2, 5) = %s, want SlotRangeIP's 198.18.130.5 echoed", got)
	}
	if ip := IP("2001:2:0:1001::1/64"); ip.String() != "2001:2:0:1001::1" {
		t.Errorf("IP of an IPv6 CIDR: %v", ip)
	}
	if ip := IP("198.19.1.1/24"); len(ip) != 4 {
		t.Errorf("IP of an IPv4 CIDR: %d bytes, want 4", len(ip))
	}
}

func TestClusterIPv6RangesStayInClusterRange6(t *testing.T) {
	cl := netip.MustParsePrefix(ClusterRange6)
	pods := netip.MustParsePrefix(ClusterPodCIDR6)
	svc := netip.MustParsePrefix(ClusterServiceCIDR6)
	for _, p := range []netip.Prefix{pods, svc} {
		if !cl.Contains(p.Addr()) || p.Bits() < cl.Bits() {
			t.Errorf("%s is not inside ClusterRange6 %s", p, cl)
		}
	}
	if pods.Overlaps(svc) {
		t.Errorf("pod range %s overlaps Service range %s", pods, svc)
	}
	if svc.Bits() < 108 {
		t.Errorf("Service range %s: the API server wants /108 or longer", svc)
	}
	if a := netip.MustParseAddr(ClusterServiceAPI6); !svc.Contains(a) {
		t.Errorf("the kubernetes Service's %s is not in %s", a, svc)
	}
	seen := map[netip.Prefix]bool{}
	for i := 1; i <= ClusterMaxNodes; i++ {
		s, gw := ClusterNodePods6(i)
		p, err := netip.ParsePrefix(s)
		if err != nil || p.Bits() != 64 || !pods.Contains(p.Addr()) || seen[p] {
			t.Fatalf("ClusterNodePods6(%d) = %s (%v): want a /64 of its own in %s", i, s, err, pods)
		}
		seen[p] = true
		if !p.Contains(netip.MustParseAddr(gw)) {
			t.Errorf("ClusterNodePods6(%d): gateway %s outside %s", i, gw, s)
		}
	}
	if s, _ := ClusterNodePods6(3); s != "2001:2:0:8103::/64" {
		t.Errorf("ClusterNodePods6(3) = %s, want node 3 echoed as 2001:2:0:8103::/64", s)
	}
}
