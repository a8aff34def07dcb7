package modes

import (
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
)

// The spec's default modes are the registry's first five: a spec file
// without modes means what it always meant.
func TestDefaultModes(t *testing.T) {
	var names []string
	for _, m := range All() {
		names = append(names, m.Name())
	}
	if !slices.Equal(names[:len(spec.DefaultModes)], spec.DefaultModes) {
		t.Errorf("the first modes = %v, spec.DefaultModes = %v", names, spec.DefaultModes)
	}
}
