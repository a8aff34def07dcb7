package drivers

import (
	"testing"

	"github.com/cnperf/cnperf/internal/testutil/deps"
)

// TestRunnerAndCLILinkNoDriver: the runner and the CLI take the drivers
// and modes as a lab.Catalog (this package makes the binary's) and link
// none of them, nor a driver's building blocks: a new driver is its
// package and a line in All, and touches neither.
func TestRunnerAndCLILinkNoDriver(t *testing.T) {
	const mod = deps.Internal
	deps.Forbid(t, []string{"run", "cli", "machine"},
		[]string{
			mod + "lab/drivers", mod + "lab/modes", // the registry and every mode
			mod + "lab/netns", mod + "lab/docker", mod + "lab/kube", // the drivers and below
			mod + "lab/process", mod + "lab/firewall", // the netns driver's blocks
			"github.com/docker/", "github.com/moby/", "k8s.io/",
		})
}
