package run

import (
	"testing"

	"github.com/cnperf/cnperf/internal/testutil/deps"
)

// TestRunnerLinksNoAnalysis: data flows one way (spec → lab → workload →
// record → analysis → report): the runner records, and what reads stored
// runs (calibration from a reference run included) is handed to it by the
// CLI (Options.Calibrate).
func TestRunnerLinksNoAnalysis(t *testing.T) {
	const mod = deps.Internal
	deps.Forbid(t, []string{"run"}, []string{mod + "analysis", mod + "report"})
}
