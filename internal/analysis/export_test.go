package analysis

import (
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// CaseMetricByKey returns a case's metric by key, for the external tests.
func CaseMetricByKey(key string) (workload.Metric, bool) {
	for _, w := range registry.All() {
		for _, m := range caseMetrics(w.Name()) {
			if m.Key == key {
				return m, true
			}
		}
	}
	return workload.Metric{}, false
}
