package spec_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/registry"
	"github.com/cnperf/cnperf/presets"
)

// TestSeedPresetsCarryClaims: every preset of a paper (seed*) carries at
// least three of the paper's findings as claims, and each claim names a
// metric its test measures: the spec cannot know a metric key, and a
// claim on a key no run has would never be judged.
func TestSeedPresetsCarryClaims(t *testing.T) {
	for _, name := range presets.Names() {
		if !strings.HasPrefix(name, "seed") {
			continue
		}
		s, err := spec.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Claims) < 3 {
			t.Errorf("%s: %d claims, want the paper's findings, at least 3", name, len(s.Claims))
		}
		for _, c := range s.Claims {
			if keys := claimMetrics(t, s, c); !slices.Contains(keys, c.Metric) {
				t.Errorf("%s: claim %s: metric %q is not one its test measures (%s)", name, c.ID, c.Metric, strings.Join(keys, ", "))
			}
		}
	}
}

// claimMetrics are the metric keys of the claim's test: its workload's, or
// ping-pong's when it names no test.
func claimMetrics(t *testing.T, s spec.Spec, c spec.Claim) []string {
	ms := pingpong.Descriptor.Metrics()
	if c.Test != "" {
		i := slices.IndexFunc(s.Tests, func(x workload.Test) bool { return x.Label() == c.Test })
		w, ok := registry.Lookup(s.Tests[i].Workload)
		if !ok {
			t.Fatalf("%s: claim %s: test %q runs no known workload", s.Name, c.ID, c.Test)
		}
		ms = w.Metrics()
	}
	var keys []string
	for _, m := range ms {
		keys = append(keys, m.Key)
	}
	return keys
}
