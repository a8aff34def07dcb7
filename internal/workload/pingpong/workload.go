package pingpong

import "github.com/cnperf/cnperf/internal/workload"

// Descriptor is ping-pong as the registry lists it: its name and the
// summary's headline metrics. Its three hosts (siege → ping → pong) do not
// fit workload.Socket's client and server, so the runner drives it itself.
var Descriptor workload.Workload = descriptor{}

type descriptor struct{}

func (descriptor) Name() string     { return "pingpong" }
func (descriptor) Headline() string { return "transfer" }

func (descriptor) Metrics() []workload.Metric {
	return []workload.Metric{
		{Key: "transfer", Title: "Transfer rate, median", Unit: "MB/s", HigherIsBetter: true, Short: "transfer MB/s"},
		{Key: "latency", Title: "Latency ping→pong, median", Unit: "ms", Short: "ping->pong ms"},
		{Key: "outer", Title: "Siege latency, median", Unit: "ms", Short: "siege ms"},
		{Key: "cell_rps", Title: "Requests per second, median over cells", Unit: "req/s", HigherIsBetter: true, Short: "req/s"},
	}
}
