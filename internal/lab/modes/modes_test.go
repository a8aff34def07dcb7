package modes

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string // "" for no error
	}{
		{[]string{"bare", "overlay-encrypted", "ovs"}, ""},
		{[]string{"bare", "nosuch"}, `modes[1]: unknown mode "nosuch" (known: `},
		{[]string{""}, `modes[0]: unknown mode ""`},
	} {
		err := Check(tc.names)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%q) = %v, want %q", tc.names, err, tc.want)
		}
	}
}

// The spec's default modes are the registry's first five: a spec file
// without modes means what it always meant.
func TestDefaultModes(t *testing.T) {
	if !slices.Equal(DefaultNames(), spec.DefaultModes) {
		t.Errorf("DefaultNames() = %v, spec.DefaultModes = %v", DefaultNames(), spec.DefaultModes)
	}
	for _, name := range spec.DefaultModes {
		if _, err := Lookup(name); err != nil {
			t.Error(err)
		}
	}
}
