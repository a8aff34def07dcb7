package run_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/run"
	"github.com/cnperf/cnperf/internal/spec"
)

// TestChainOnlyWhereADriverBuildsOne: which drivers build a chain of hosts
// is the drivers' to say (lab.Capabilities.Chains), not a name in the spec; a chain
// on any other is refused in the spec's words before anything is built.
func TestChainOnlyWhereADriverBuildsOne(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"driver: docker\n", "chain: driver docker: only the netns driver builds chains"},
		{"drivers: [netns, docker]\n", "chain: driver docker: only the netns driver builds chains"},
		{"", ""},
	} {
		s, err := spec.Parse(strings.NewReader("name: c\nmodes: [bare]\nreference: bare\nchain: {hosts: 3}\ntests: [{workload: rr}]\n"+tc.yaml), "c.yaml")
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		_, err = run.NewPlan(run.Options{Spec: s, Lab: drivers.Catalog()})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: Check = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
