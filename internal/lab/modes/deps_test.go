package modes

import (
	"os"
	"testing"

	"github.com/cnperf/cnperf/internal/testutil/deps"
)

// TestModesLinkNoMode: a mode builds on blocks (lab/bridged, lab/routed,
// the drivers' netdev, firewall, ...), never on another mode, and the
// testcluster package links none: changing one mode changes no other.
func TestModesLinkNoMode(t *testing.T) {
	const mod = deps.Internal
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range dirs {
		if d.IsDir() && d.Name() != "testdata" {
			names = append(names, d.Name())
		}
	}
	if len(names) < 2 {
		t.Fatalf("found modes %v", names)
	}
	for _, x := range names {
		var others []string
		for _, y := range names {
			if y != x {
				others = append(others, mod+"lab/modes/"+y)
			}
		}
		deps.Forbid(t, []string{"lab/modes/" + x}, others)
	}
	deps.Forbid(t, []string{"testcluster"}, []string{mod + "lab/modes"})
}
