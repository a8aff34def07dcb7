package netns_test

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// TestUnderlaySteersFlows: every end of a lab's underlay wires, the hosts'
// NICs, their switch ports and a delayed uplink's ends, takes each flow on
// one CPU of the lab's (rps_cpus), so the wire delivers a flow in order.
func TestUnderlaySteersFlows(t *testing.T) {
	l := linkLab(t, "tsteer", 9680, []string{"s"}, []conditions.Link{{Link: "s", Delay: time.Millisecond}})
	want := netdev.CPUMask(nil, runtime.NumCPU())
	ends := map[string][]string{l.Hosts[0].NS: {"eth0"}, l.Hosts[1].NS: {"eth0"}, l.Switch: {"c", "s", "ux2", "uy2"}}
	for ns, devs := range ends {
		for _, dev := range devs {
			out, err := exec.Command("ip", "netns", "exec", ns, "cat", "/sys/class/net/"+dev+"/queues/rx-0/rps_cpus").CombinedOutput()
			if err != nil {
				t.Fatalf("%s in %s: %v: %s", dev, ns, err, out)
			}
			if got := strings.TrimSpace(string(out)); strings.TrimLeft(got, "0,") != strings.TrimLeft(want, "0,") {
				t.Errorf("%s in %s: rps_cpus %s, want %s", dev, ns, got, want)
			}
		}
	}
}
