package modes

import (
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
)

// The spec's default modes are the registry's first five: a spec file
// without modes means what it always meant.
func TestDefaultModes(t *testing.T) {
	if !slices.Equal(Names()[:len(spec.DefaultModes)], spec.DefaultModes) {
		t.Errorf("the first modes = %v, spec.DefaultModes = %v", Names(), spec.DefaultModes)
	}
	for _, name := range spec.DefaultModes {
		if _, err := Lookup(name); err != nil {
			t.Error(err)
		}
	}
}
