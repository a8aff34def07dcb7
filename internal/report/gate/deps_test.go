package gate

import (
	"testing"

	"github.com/cnperf/cnperf/internal/testutil/deps"
)

// Judging a run reads it as the report does: it must not link the code
// that builds labs, so that CI can judge runs on a machine without
// namespaces or Docker.
func TestJudgingLinksNoLabCode(t *testing.T) {
	const mod = deps.Internal
	deps.Forbid(t, []string{"report/gate"},
		[]string{mod + "lab", mod + "run", "github.com/docker", "github.com/moby", "github.com/vishvananda"})
}
