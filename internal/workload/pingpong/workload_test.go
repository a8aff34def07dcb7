package pingpong

import (
	"slices"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

// TestDescriptorCommandLines: the servers' and the client's command lines
// are built from the spec's settings and the lab's addresses, as the
// runner has always started them.
func TestDescriptorCommandLines(t *testing.T) {
	set := workload.SweepSettings{MaxBody: 5000, Retries: 3, Timeout: 2 * time.Second, Repetitions: 4, Concurrency: 2}
	addrs := map[string]workload.SweepAddr{
		"pong": {Listen: "0.0.0.0:8080", Internal: "198.18.0.3:8080"},
		"ping": {Listen: "0.0.0.0:8080", Internal: "198.18.0.2:8080"},
	}
	srv := Descriptor.Servers(set, func(role string) workload.SweepAddr { return addrs[role] })
	want := [][]string{
		{"serve", "pong", "--listen", "0.0.0.0:8080", "--max-size", "5000"},
		{"serve", "ping", "--listen", "0.0.0.0:8080", "--pong", "http://198.18.0.3:8080", "--retries", "3", "--timeout", "2s"},
	}
	if len(srv) != 2 || srv[0].Role != "pong" || srv[1].Role != "ping" {
		t.Fatalf("servers %+v: want pong, then ping", srv)
	}
	for i := range srv {
		if !slices.Equal(srv[i].Args, want[i]) {
			t.Errorf("%s: %q, want %q", srv[i].Role, srv[i].Args, want[i])
		}
	}
	got := Descriptor.ClientArgs(set, "198.18.0.2:8080", []int{7, 0, 300})
	wantClient := []string{"siege", "--target", "http://198.18.0.2:8080", "--sizes", "7,0,300", "--repetitions", "4",
		"--concurrency", "2", "--timeout", "2s", "--format", "envelope"}
	if !slices.Equal(got, wantClient) {
		t.Errorf("client %q, want %q", got, wantClient)
	}
	if Descriptor.Client() != "siege" || Descriptor.Target() != "ping" {
		t.Errorf("client on %q against %q, want siege against ping", Descriptor.Client(), Descriptor.Target())
	}
}
