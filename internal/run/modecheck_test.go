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
