package run

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/presets"
)

// TestModeOnDriverRefusedBeforeBuilding: a mode its driver cannot build is
// bad input that Check (which runs before any lab is built) refuses,
// naming the spec's mode; Check builds nothing, so this test needs no root.
func TestModeOnDriverRefusedBeforeBuilding(t *testing.T) {
	for _, tc := range []struct {
		name    string
		driver  string
		drivers []string
		modes   []string
		want    string // "" for accepted
	}{
		{"encrypted overlay on docker", "docker", nil, []string{"bare", "bridge", "overlay-encrypted"}, "modes[2]: overlay-encrypted cannot be built on the docker driver (it builds bare, "},
		{"user-space overlay on docker, compared", "netns", []string{"netns", "docker"}, []string{"bare", "overlay-userspace"}, "modes[1]: overlay-userspace cannot be built on the docker driver"},
		{"encrypted overlay on netns", "netns", nil, []string{"bare", "overlay-encrypted"}, ""},
		{"a cluster's mode on netns", "netns", nil, []string{"bare", "k8s-pod"}, "modes[1]: k8s-pod cannot be built on the netns driver"},
		{"docker's modes on docker", "docker", nil, []string{"bare", "host", "bridge", "macvlan", "overlay"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := spec.Preset("tiny")
			if err != nil {
				t.Fatal(err)
			}
			s.Driver, s.Drivers, s.Modes = tc.driver, tc.drivers, tc.modes
			err = checkModesOnDrivers(drivers.Catalog(), s)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one with %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("error of more than one line: %q", err)
			}
		})
	}
}

// TestPresetsBuildOnTheirDrivers: every preset's modes can be built on its
// drivers.
func TestPresetsBuildOnTheirDrivers(t *testing.T) {
	for _, name := range presets.Names() {
		s, err := spec.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkModesOnDrivers(drivers.Catalog(), s); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
}

// TestFamilyRefusedBeforeBuilding: an ip_family a mode does not carry is
// refused by Check in one line naming the spec's field and mode, before any
// lab is built; modes that carry it pass.
func TestFamilyRefusedBeforeBuilding(t *testing.T) {
	for _, tc := range []struct {
		name   string
		family string
		modes  []string
		chain  bool
		want   string // "" for accepted
	}{
		{"ipv6 on the kernel's modes", "ipv6", []string{"bare", "host", "macvlan", "veth-routed", "bridge-routed"}, false, ""},
		{"dual on the kernel's modes", "dual", []string{"bare", "host", "macvlan", "veth-routed", "bridge-routed"}, false, ""},
		{"ipv4 anywhere", "ipv4", []string{"bare", "overlay-userspace"}, false, ""},
		{"ipv6 on the user-space overlay", "ipv6", []string{"bare", "overlay-userspace"}, false, "modes[1]: lab: ip_family ipv6: mode overlay-userspace carries ipv4 only"},
		{"dual on the user-space overlay", "dual", []string{"overlay-userspace"}, false, "modes[0]: lab: ip_family dual: mode overlay-userspace carries ipv4 only"},
		{"ipv6 on a chain", "ipv6", []string{"bare"}, true, ""},
		{"dual on a relayed chain", "dual", []string{"bare", "overlay-userspace"}, true, "modes[1]: lab: ip_family dual: mode overlay-userspace carries ipv4 only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := spec.Preset("tiny")
			if err != nil {
				t.Fatal(err)
			}
			s.Driver, s.Drivers, s.Modes = "netns", nil, tc.modes
			s.Conditions.IPFamily = tc.family
			if tc.chain {
				s.Chain = &spec.Chain{Hosts: 2}
			}
			err = checkModesOnDrivers(drivers.Catalog(), s)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestDockerFamilyRefusedBeforeBuilding: on the docker driver IPv6 and
// dual pass for the modes whose Docker build carries them and the others
// are refused by Check, naming the mode and the driver, before any lab.
func TestDockerFamilyRefusedBeforeBuilding(t *testing.T) {
	for _, tc := range []struct {
		family string
		modes  []string
		want   string // "" for accepted
	}{
		{"ipv6", []string{"bare", "host", "bridge", "macvlan"}, ""},
		{"dual", []string{"bare", "host", "bridge", "macvlan"}, ""},
		{"ipv6", []string{"bare", "overlay"}, "modes[1]: lab: ip_family ipv6: mode overlay carries ipv4 only on the docker driver"},
		{"dual", []string{"links"}, "modes[0]: lab: ip_family dual: mode links carries ipv4 only on the docker driver"},
		{"ipv4", []string{"bare", "overlay", "links"}, ""},
	} {
		t.Run(tc.family+"/"+strings.Join(tc.modes, ","), func(t *testing.T) {
			s, err := spec.Preset("tiny")
			if err != nil {
				t.Fatal(err)
			}
			s.Driver, s.Drivers, s.Modes = "docker", nil, tc.modes
			s.Conditions.IPFamily = tc.family
			err = checkModesOnDrivers(drivers.Catalog(), s)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
