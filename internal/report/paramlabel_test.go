package report

import (
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
)

func TestParamLabel(t *testing.T) {
	for _, tc := range []struct {
		workload, protocol, param, want string
	}{
		{"stream", "tcp", "length", "Write size (bytes)"}, // the workload's own title
		{"stream", "udp", "length", "Datagram size (bytes)"},
		{"jitter", "udp", "length", "Datagram size (bytes)"},
		{"rr", "tcp", "request", "Request size (bytes)"},
		{"stream", "tcp", "parallel", "Parallel streams"},
		{"stream", "tcp", "clients", "Client containers"},
		{"rr", "udp", "processes", "Clients per container"},
		{"nosuch", "", "colour", "colour"},
		{"stream", "tcp", "", ""},
	} {
		c := analysis.Case{Workload: tc.workload, Protocol: tc.protocol, Param: tc.param}
		if got := paramLabel(c); got != tc.want {
			t.Errorf("paramLabel(%s %s %s) = %q, want %q", tc.workload, tc.protocol, tc.param, got, tc.want)
		}
	}
}
