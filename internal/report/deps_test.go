package report

import (
	"testing"

	"github.com/cnperf/cnperf/internal/testutil/deps"
)

// Reading, analysing and reporting stored runs must not link the code that
// builds labs: data flows one way, spec → lab → workload → record →
// analysis → report, and a run is re-analysed on machines without Docker
// or namespaces.
func TestReadingRunsLinksNoLabCode(t *testing.T) {
	const mod = deps.Internal
	deps.Forbid(t, []string{"record", "analysis", "report", "report/export", "report/export/exporttest", "report/importer", "report/figure"},
		[]string{mod + "lab", mod + "run", "github.com/docker/", "github.com/moby/", "github.com/vishvananda/"})
}
