package drivers

import (
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// TestIPFamilyOverlays: the bridge, links and overlay modes carry IPv6 and
// dual stack on the netns driver; the overlays whose datapath is IPv4's
// alone (cnperf's user-space router reads IPv4 headers, Open vSwitch's and
// Flannel's labs are built on IPv4 ranges) refuse them in one line naming
// the field and the mode, before any lab.
func TestIPFamilyOverlays(t *testing.T) {
	cat := Catalog()
	for _, c := range []struct {
		mode, family, want string
	}{
		{"bridge", conditions.IPv6, ""},
		{"bridge", conditions.Dual, ""},
		{"links", conditions.IPv6, ""},
		{"links", conditions.Dual, ""},
		{"overlay", conditions.IPv6, ""},
		{"overlay", conditions.Dual, ""},
		{"overlay", conditions.IPv4, ""},
		{"overlay-userspace", conditions.IPv6, "lab: ip_family ipv6: mode overlay-userspace carries ipv4 only"},
		{"overlay-userspace", conditions.Dual, "lab: ip_family dual: mode overlay-userspace carries ipv4 only"},
		{"overlay-encrypted", conditions.IPv6, "lab: ip_family ipv6: mode overlay-encrypted carries ipv4 only"},
		{"ovs", conditions.IPv6, "lab: ip_family ipv6: mode ovs carries ipv4 only"},
		{"flannel-vxlan", conditions.Dual, "lab: ip_family dual: mode flannel-vxlan carries ipv4 only"},
		{"flannel-host-gw", conditions.IPv6, "lab: ip_family ipv6: mode flannel-host-gw carries ipv4 only"},
	} {
		m, err := cat.Mode(c.mode)
		if err != nil {
			t.Fatal(err)
		}
		cfg := lab.Config{Name: "ipfamily_refusal_test", Mode: m, Conditions: conditions.Set{IPFamily: c.family}}
		err = netns.Driver{}.Validate(cfg)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s on %s: %q, want %q", c.family, c.mode, got, c.want)
		}
	}
}

// TestIPFamilyDockerRefuses: of the modes that carry IPv6 on the netns
// driver, those whose Docker build is IPv4's alone (links, overlay's
// swarm) refuse it on the docker driver, naming the mode; bridge carries
// it there too (Docker's own IPv6).
func TestIPFamilyDockerRefuses(t *testing.T) {
	for _, name := range []string{"bridge", "links", "overlay"} {
		m, err := Catalog().Mode(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{conditions.IPv6, conditions.Dual} {
			err := docker.Driver{}.CheckFamily(m, conditions.Set{IPFamily: f})
			want := "lab: ip_family " + f + ": mode " + name + " carries ipv4 only on the docker driver"
			if name == "bridge" {
				if err != nil {
					t.Errorf("%s on %s: %v, want carried", f, name, err)
				}
				continue
			}
			if err == nil || err.Error() != want {
				t.Errorf("%s on %s: %v, want %q", f, name, err, want)
			}
			err = docker.Driver{}.Validate(lab.Config{Name: "ipfamily_refusal_test", Mode: m, Conditions: conditions.Set{IPFamily: f}})
			if err == nil || err.Error() != want {
				t.Errorf("%s on %s (Validate): %v, want %q", f, name, err, want)
			}
		}
	}
}
