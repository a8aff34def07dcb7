package spec

import (
	"strings"
	"testing"
)

// TestSweepListThroughMergeKey: a size sweep's entry is re-read from the
// tests list's YAML node; a list that came through a merge key has no such
// node, and the spec is refused in one line (it panicked).
func TestSweepListThroughMergeKey(t *testing.T) {
	_, err := Parse(strings.NewReader("name: x\n<<: {tests: [{workload: pingpong}]}\n"), "t.yaml")
	if want := "tests[0]: a size sweep is read from the spec's own tests: list"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}
