package analysis

import "github.com/cnperf/cnperf/internal/workload/registry"

// SocketMetricByKey returns a socket metric by key, for the external tests.
func SocketMetricByKey(key string) (SocketMetric, bool) {
	for _, w := range registry.All() {
		for _, m := range socketMetrics(w.Name()) {
			if m.Key == key {
				return m, true
			}
		}
	}
	return SocketMetric{}, false
}
