package run

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// TestStagedServices: a cluster's labs run in ascending order of their
// services condition, whatever the spec's order, while the clusters
// interleave within each stage; a run without the condition keeps the
// interleaved order.
func TestStagedServices(t *testing.T) {
	lab := func(key, cluster string, n int) spec.Lab {
		return spec.Lab{Key: key, Conditions: conditions.Set{Cluster: cluster, Services: n}}
	}
	labs := []spec.Lab{lab("a1000", "a", 1000), lab("a0", "a", 0), lab("b0", "b", 0), lab("b1000", "b", 1000), lab("b5000", "b", 5000)}
	keys := []string{"a1000", "a0", "b0", "b1000", "b5000"}
	got := staged(interleave(keys, 2, 1), labs)
	var order []string
	for _, c := range got {
		order = append(order, fmt.Sprintf("%s#%d", c.mode, c.unit))
	}
	want := []string{"a0#0", "b0#0", "a0#1", "b0#1", "a1000#0", "b1000#0", "b1000#1", "a1000#1", "b5000#0", "b5000#1"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("staged order = %v, want %v", order, want)
	}
	plain := []spec.Lab{lab("x", "", 0), lab("y", "", 0)}
	cells := interleave([]string{"x", "y"}, 3, 1)
	if got := staged(cells, plain); !reflect.DeepEqual(got, cells) {
		t.Errorf("without services: %v, want %v", got, cells)
	}
}
