package analysis

// SocketMetricByKey returns a socket metric by key, for the external tests.
func SocketMetricByKey(key string) (SocketMetric, bool) {
	for _, m := range socketMetrics {
		if m.Key == key {
			return m, true
		}
	}
	return SocketMetric{}, false
}
