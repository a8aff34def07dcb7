package lab_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/testutil"
)

// BenchmarkUpDown builds and removes labs of growing size: many endpoints
// on one host (up to the bound, lab.MaxPerHost) and many hosts of one
// endpoint each, in the bridge mode (a veth, addresses and published ports
// per endpoint) and the routed modes (a route per host on every host). It
// reports up and down per endpoint, which should stay flat as labs grow,
// and how long after down the kernel took to free the namespaces (it does
// so in the background, and whatever builds next waits on it):
//
//	go test -run '^$' -bench UpDown -benchtime 1x ./internal/lab/
func BenchmarkUpDown(b *testing.B) {
	testutil.RequireRoot(b)
	for _, mode := range []string{"bridge", "veth-routed", "overlay"} {
		for _, shape := range []struct {
			name       string
			hosts, per int
		}{
			{"endpoints=16", 1, 16}, {"endpoints=64", 1, 64}, {"endpoints=250", 1, lab.MaxPerHost},
			{"hosts=10", 10, 1}, {"hosts=100", 100, 1}, {"hosts=250", 250, 1},
		} {
			b.Run(mode+"/"+shape.name, func(b *testing.B) {
				m, err := drivers.Catalog().Mode(mode)
				if err != nil {
					b.Fatal(err)
				}
				topo := grid(shape.hosts, shape.per)
				n := shape.hosts * shape.per
				name := "tbench_" + strings.ReplaceAll(mode, "-", "_")
				var up, down, freed time.Duration
				for range b.N {
					before := liveNetns()
					start := time.Now()
					_, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Topology: topo, Port: 7000})
					up += time.Since(start)
					if err != nil {
						b.Fatal(err)
					}
					start = time.Now()
					if err := drivers.Catalog().Down(name); err != nil {
						b.Fatal(err)
					}
					down += time.Since(start)
					freed += settle(before)
				}
				per := float64(b.N * n)
				b.ReportMetric(float64(up.Milliseconds())/per, "ms-up/endpoint")
				b.ReportMetric(float64(down.Milliseconds())/per, "ms-down/endpoint")
				b.ReportMetric(float64(freed.Milliseconds())/per, "ms-freed/endpoint")
			})
		}
	}
}

// grid is hosts h1..hN with per endpoints each, roles e<host>_<slot>.
func grid(hosts, per int) lab.Topology {
	var t lab.Topology
	for i := range hosts {
		h := lab.HostSpec{Name: fmt.Sprintf("h%d", i+1)}
		for k := range per {
			h.Endpoints = append(h.Endpoints, lab.EndpointSpec{Role: fmt.Sprintf("e%d_%d", i+1, k)})
		}
		t.Hosts = append(t.Hosts, h)
	}
	return t
}

// liveNetns is how many network namespaces the kernel holds, the
// net_namespace slab's active objects (-1: unknown); namespaces deleted
// but not yet freed count.
func liveNetns() int {
	b, err := os.ReadFile("/proc/slabinfo")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "net_namespace" {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// settle waits until the kernel has freed the namespaces a lab's removal
// let go: until it holds no more than before the lab was built (give or
// take a slab's slack) or, as other namespaces come and go and the slab
// keeps some, until the count has stopped falling for half a second; at
// most 30 s. It returns how long that took: the work a lab's removal
// leaves the kernel.
func settle(before int) time.Duration {
	start := time.Now()
	if before < 0 {
		return 0
	}
	last, since := liveNetns(), time.Now()
	for time.Since(start) < 30*time.Second {
		n := liveNetns()
		if n < 0 || n <= before+8 {
			break
		}
		if n < last {
			last, since = n, time.Now()
		} else if time.Since(since) > 500*time.Millisecond {
			return since.Sub(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}
