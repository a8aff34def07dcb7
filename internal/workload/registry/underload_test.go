package registry_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

// TestUnderLoadCase: an rr case with under_load N runs beside a TCP stream
// of N parallel streams, for its warm-up, duration and a tail, at its
// interval, filed under the rr case; under_load 0 and other workloads run
// none; the stream's server is what the spec's tests then need besides
// rr's, and the rr client is never told of the load.
func TestUnderLoadCase(t *testing.T) {
	cases, err := Expand([]Test{
		{Workload: "rr", Duration: 5 * time.Second, Interval: 500 * time.Millisecond,
			Params: workload.Params{"omit": 2 * time.Second}, Sweep: &Sweep{Param: "under_load", Values: []string{"0", "8"}}},
		{Workload: "stream"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 3 {
		t.Fatalf("%d cases, want 3", len(cases))
	}
	if _, ok := cases[0].LoadCase(); ok {
		t.Error("under_load 0 runs a load")
	}
	if _, ok := cases[2].LoadCase(); ok {
		t.Error("a stream test runs a load")
	}
	lc, ok := cases[1].LoadCase()
	if !ok {
		t.Fatal("under_load 8 runs no load")
	}
	if lc.Test.Workload != "stream" || lc.Test.Params.Int("parallel") != 8 || lc.Test.Duration != 8*time.Second ||
		lc.Test.Interval != 500*time.Millisecond || lc.Label != cases[1].Label || lc.Index != 0 {
		t.Errorf("load case %+v", lc)
	}
	if err := lc.Validate(); err != nil {
		t.Errorf("the load case is not a valid stream case: %v", err)
	}
	args := lc.ClientArgs("198.18.0.2")
	if !slices.Contains(args, "--parallel") || args[0] != "stream" {
		t.Errorf("load client args %v", args)
	}
	for _, a := range cases[1].ClientArgs("198.18.0.2") {
		if a == "--under-load" || a == "8" {
			t.Errorf("the rr client is told of the load: %v", cases[1].ClientArgs("198.18.0.2"))
		}
	}
	srv, ok := workload.LoadServer(cases[:2])
	if !ok || srv.Role != "stream-server" {
		t.Errorf("LoadServer = %+v, %v; want the stream server", srv, ok)
	}
	if _, ok := workload.LoadServer(cases[:1]); ok {
		t.Error("an idle probe needs the load's server")
	}
}
