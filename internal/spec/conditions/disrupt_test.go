package conditions

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestValidateDisrupt(t *testing.T) {
	s := time.Second
	d := func(component, node, down string, at ...time.Duration) Disruption {
		return Disruption{Component: component, Node: node, Down: down, At: at}
	}
	many := make([]Disruption, MaxDisruptions+1)
	for i := range many {
		many[i] = d("kubelet", "server", Restart, s)
	}
	for _, tc := range []struct {
		name string
		ds   []Disruption
		test time.Duration
		want string // "" for valid
	}{
		{"none", nil, 0, ""},
		{"agent restart", []Disruption{d(ComponentCNIAgent, "server", Restart, 2*s)}, 6 * s, ""},
		{"kube-proxy down 2s twice", []Disruption{d("kube-proxy", "client", "2s", s, 3500*time.Millisecond)}, 6 * s, ""},
		{"on one cluster", []Disruption{{Component: "containerd", Node: "server", Down: Restart, At: []time.Duration{s}, Cluster: "flannel"}}, 6 * s, ""},
		{"no duration", []Disruption{d("kubelet", "server", Restart, s)}, 0, "disrupt: disruptions need socket tests with a duration"},
		{"too many", many, 6 * s, "disrupt: 9 entries, more than 8"},
		{"unknown component", []Disruption{d("etcd", "server", Restart, s)}, 6 * s, `disrupt[0].component "etcd": want cni-agent, kube-proxy, containerd, kubelet`},
		{"long component", []Disruption{d(strings.Repeat("x", 100), "server", Restart, s)}, 6 * s, `disrupt[0].component "` + strings.Repeat("x", 32) + `"`},
		{"bad node", []Disruption{d("kubelet", "node1", Restart, s)}, 6 * s, `disrupt[0].node "node1": want server or client`},
		{"bad cluster", []Disruption{{Component: "kubelet", Node: "server", Down: Restart, At: []time.Duration{s}, Cluster: "Flannel"}}, 6 * s, `disrupt[0].cluster "Flannel"`},
		{"bad down", []Disruption{d("kubelet", "server", "soon", s)}, 6 * s, `disrupt[0].down "soon": want restart or a duration`},
		{"no down", []Disruption{d("kubelet", "server", "", s)}, 6 * s, `disrupt[0].down "": want restart or a duration`},
		{"down too short", []Disruption{d("kubelet", "server", "0s", s)}, 6 * s, "disrupt[0].down 0s: want 1ms to 1m0s"},
		{"down too long", []Disruption{d("kubelet", "server", "2m", s)}, 600 * s, "disrupt[0].down 2m0s: want 1ms to 1m0s"},
		{"down past the test", []Disruption{d("kubelet", "server", "6s", s)}, 6 * s, "disrupt[0].down 6s: not shorter than the shortest test (6s)"},
		{"no times", []Disruption{d("kubelet", "server", Restart)}, 6 * s, "disrupt[0].at: give the times"},
		{"too many times", []Disruption{d("kubelet", "server", Restart, 1, 2, 3, 4, 5, 6, 7, 8, 9)}, 6 * s, "disrupt[0].at: 9 times, more than 8"},
		{"negative", []Disruption{d("kubelet", "server", Restart, -s)}, 6 * s, "disrupt[0].at[0] -1s: want 0 or later"},
		{"at the end", []Disruption{d("kubelet", "server", Restart, 6*s)}, 6 * s, "disrupt[0].at[0] 6s: not before the shortest test's end (6s)"},
		{"ends past the end", []Disruption{d("kubelet", "server", "2s", 5*s)}, 6 * s, "disrupt[0].at[0] 5s: with down 2s it ends at 7s"},
		{"overlapping", []Disruption{d("kubelet", "server", "2s", s, 2*s)}, 6 * s, "disrupt[0].at[1] 2s: not after the stop at 1s has started again"},
		{"restarts at one time", []Disruption{d("kubelet", "server", Restart, s, s)}, 6 * s, "disrupt[0].at[1] 1s: not after the stop at 1s"},
		// A time near 2^63 ns, which would wrap added to down.
		{"end of time", []Disruption{d("kubelet", "server", "1s", math.MaxInt64-s/2)}, 6 * s, "disrupt[0].at[0] 2562047h47m16.354775807s: not before the shortest test's end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateDisrupt(tc.ds, tc.test)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ValidateDisrupt: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("ValidateDisrupt = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestOutage(t *testing.T) {
	if o := (Disruption{Down: Restart}).Outage(); o != 0 {
		t.Errorf("restart: outage %s, want 0", o)
	}
	if o := (Disruption{Down: "1500ms"}).Outage(); o != 1500*time.Millisecond {
		t.Errorf("1500ms: outage %s", o)
	}
}
