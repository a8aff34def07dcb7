package drivers

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
)

// The binary's catalog says which of a spec's drivers or modes is not one,
// in the spec's words.
func TestCheckDrivers(t *testing.T) {
	for _, tc := range []struct {
		driver string
		list   []string
		want   string // "" for no error
	}{
		{"netns", nil, ""},
		{"netns", []string{"netns", "docker"}, ""},
		{"lxd", nil, `driver "lxd": unknown (known: netns, docker, kubernetes)`},
		{"", nil, `driver "": unknown`},
		{"netns", []string{"netns", "kvm"}, `drivers[1] "kvm": unknown (known: netns, docker, kubernetes)`},
	} {
		err := Catalog().CheckDrivers(tc.driver, tc.list)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckDrivers(%q, %q) = %v, want %q", tc.driver, tc.list, err, tc.want)
		}
	}
}

func TestCheckModes(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string // "" for no error
	}{
		{[]string{"bare", "overlay-encrypted", "ovs"}, ""},
		{[]string{"bare", "nosuch"}, `modes[1]: unknown mode "nosuch" (known: `},
		{[]string{""}, `modes[0]: unknown mode ""`},
	} {
		err := Catalog().CheckModes(tc.names)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckModes(%q) = %v, want %q", tc.names, err, tc.want)
		}
	}
}

// TestSingleHostModes: the modes that run on an existing engine say so
// themselves (lab.SingleHost), and the docker driver's message lists them.
func TestSingleHostModes(t *testing.T) {
	var single []string
	for _, m := range Catalog().Modes {
		if lab.IsSingleHost(m) {
			single = append(single, m.Name())
		}
	}
	if got := strings.Join(single, ","); got != "bare,host,bridge" {
		t.Errorf("single-host modes %s, want bare,host,bridge", got)
	}
}
