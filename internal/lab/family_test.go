package lab

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec/conditions"
)

type v4Mode struct{}

func (v4Mode) Name() string    { return "useroverlay" }
func (v4Mode) Summary() string { return "" }

type v6Mode struct{ v4Mode }

func (v6Mode) Families() []string { return []string{conditions.IPv4, conditions.IPv6, conditions.Dual} }

// TestCheckFamily: a mode without Families carries IPv4 alone and refuses
// the others in one line naming the spec's field; one with Families carries
// what it lists.
func TestCheckFamily(t *testing.T) {
	for _, tc := range []struct {
		mode   Mode
		family string
		want   string
	}{
		{v4Mode{}, "", ""},
		{v4Mode{}, "ipv4", ""},
		{v4Mode{}, "ipv6", "lab: ip_family ipv6: mode useroverlay carries ipv4 only"},
		{v4Mode{}, "dual", "lab: ip_family dual: mode useroverlay carries ipv4 only"},
		{v6Mode{}, "ipv6", ""},
		{v6Mode{}, "dual", ""},
		{v6Mode{}, "", ""},
	} {
		err := CheckFamily(tc.mode, conditions.Set{IPFamily: tc.family})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want || strings.Contains(got, "\n") {
			t.Errorf("%T, ip_family %q: %q, want %q", tc.mode, tc.family, got, tc.want)
		}
	}
}

// TestAddressed: an endpoint's addresses follow the family: IPv4 as
// always, IPv6 in brackets with a listen on [::], and dual dialling IPv6
// with the IPv4 twins recorded.
func TestAddressed(t *testing.T) {
	v4, v6 := net.ParseIP("198.19.1.2").To4(), net.ParseIP("2001:2:0:1001::2")
	for _, tc := range []struct {
		family              string
		listen, dial, dial4 string
	}{
		{"", "0.0.0.0:5000", "198.19.1.2:5000", ""},
		{"ipv4", "0.0.0.0:5000", "198.19.1.2:5000", ""},
		{"ipv6", "[::]:5000", "[2001:2:0:1001::2]:5000", ""},
		{"dual", "[::]:5000", "[2001:2:0:1001::2]:5000", "198.19.1.2:5000"},
	} {
		c := conditions.Set{IPFamily: tc.family}
		var nil4 net.IP
		if c.HasIPv4() {
			nil4 = v4
		}
		ep := Addressed(Endpoint{Host: "h1"}, c, nil4, v6, 5000)
		if ep.Host != "h1" || ep.Listen != tc.listen || ep.External != tc.dial || ep.Internal != tc.dial ||
			ep.External4 != tc.dial4 || ep.Internal4 != tc.dial4 {
			t.Errorf("ip_family %q: %+v, want listen %s, dial %s, IPv4 %q", tc.family, ep, tc.listen, tc.dial, tc.dial4)
		}
		if host, _, err := net.SplitHostPort(ep.Internal); err != nil || net.ParseIP(host) == nil {
			t.Errorf("ip_family %q: Internal %q does not split into an address and a port: %v", tc.family, ep.Internal, err)
		}
	}
}

// TestKernelIPv6: IPv6 asked of a kernel without it is refused in one
// line; IPv4 is never asked about.
func TestKernelIPv6(t *testing.T) {
	with, without := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(with, "net", "ipv6"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		root, family, want string
	}{
		{with, "ipv6", ""},
		{with, "dual", ""},
		{without, "", ""},
		{without, "ipv4", ""},
		{without, "ipv6", "lab: ip_family ipv6: this kernel has no IPv6"},
		{without, "dual", "lab: ip_family dual: this kernel has no IPv6"},
	} {
		err := KernelIPv6(tc.root, conditions.Set{IPFamily: tc.family})
		if (err == nil) != (tc.want == "") || err != nil && (!strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")) {
			t.Errorf("ip_family %q on %s: %v, want %q", tc.family, tc.root, err, tc.want)
		}
	}
}
