package run

import (
	"errors"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
)

// onCluster is a runtime on a cluster whose node daemons can be read, or
// not (err).
type onCluster struct {
	seen
	meter lab.DaemonMeter
	err   error
}

func (o onCluster) DaemonMeter() (lab.DaemonMeter, error) { return o.meter, o.err }

type counter struct{}

func (counter) Read() (lab.DaemonSnapshot, error) { return lab.DaemonSnapshot{}, nil }

// TestDaemonMeter: a lab on a cluster gets its runtime's reader of the
// node daemons; where there is none the run says why, once, and records
// none; a lab off a cluster neither reads nor says anything.
func TestDaemonMeter(t *testing.T) {
	for _, tt := range []struct {
		name    string
		rt      lab.Runtime
		meter   bool
		message string
	}{
		{"off a cluster", seen{}, false, ""},
		{"no runtime", nil, false, ""},
		{"test cluster", onCluster{meter: counter{}}, true, ""},
		{"no metrics-server", onCluster{err: errors.New("no pod metrics")}, false, "cnperf: mode k8s-pod: the nodes' daemons' CPU and memory: not available (no pod metrics)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			e := &env{lab: &lab.Lab{Lab: record.Lab{Name: "a"}, Runtime: tt.rt}}
			m := daemonMeter(e, "k8s-pod", &out)
			if (m != nil) != tt.meter || out.String() != tt.message {
				t.Errorf("meter %v, said %q; want %v, %q", m != nil, out.String(), tt.meter, tt.message)
			}
		})
	}
}
