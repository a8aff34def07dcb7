// Package pingpong describes Kratzke's HTTP ping-pong benchmark
// (github.com/nkratzke/pingpong, ppbench): its workload descriptor, the
// size plan, and the bounds, URL rules and /mping answer its servers and
// client share. The servers and their commands are package
// pingpong/server, the client (siege) package pingpong/siege: reading a
// spec or a run links neither.
package pingpong

import (
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/workload"
)

// Descriptor is ping-pong as the registry and the runner know it: its
// name and headline metrics, its servers (pong, and ping in front of it)
// and its client's command line (cnperf siege, package siege). Kratzke's
// ppbench sweeps message sizes through these three hosts; it is a
// workload.SizeSweep.
var Descriptor workload.SizeSweep = descriptor{}

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

// Client: siege runs on a host of its own, outside the servers' cluster.
func (descriptor) Client() string { return "siege" }

// Target: siege sends to ping.
func (descriptor) Target() string { return "ping" }

// Servers are pong, then ping relaying to pong's internal address.
func (descriptor) Servers(set workload.SweepSettings, at func(role string) workload.SweepAddr) []workload.Server {
	pong, ping := at("pong"), at("ping")
	return []workload.Server{
		{Role: "pong", Port: DefaultPongPort, Protocols: []string{"tcp"},
			Args: []string{"serve", "pong", "--listen", pong.Listen, "--max-size", strconv.Itoa(set.MaxBody)}},
		{Role: "ping", Port: DefaultPingPort, Protocols: []string{"tcp"},
			Args: []string{"serve", "ping", "--listen", ping.Listen, "--pong", "http://" + pong.Internal,
				"--retries", strconv.Itoa(set.Retries), "--timeout", set.Timeout.String()}},
	}
}

// Probe: 4 bytes, the smallest size every pong implementation answers
// with a body of the size asked for.
func (descriptor) Probe() int { return 4 }

// ClientArgs is `cnperf siege` for one chunk of sizes, printing envelope
// lines (--format envelope): one interval line per request.
func (descriptor) ClientArgs(set workload.SweepSettings, target string, sizes []int) []string {
	list := make([]string, len(sizes))
	for i, n := range sizes {
		list[i] = strconv.Itoa(n)
	}
	return []string{"siege", "--target", "http://" + target, "--sizes", strings.Join(list, ","),
		"--repetitions", strconv.Itoa(set.Repetitions), "--concurrency", strconv.Itoa(set.Concurrency),
		"--timeout", set.Timeout.String(), "--format", "envelope"}
}
