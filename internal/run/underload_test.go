package run

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil"
)

// TestProbeUnderLoadRisesOnRateLimitedLink: on a bare lab whose underlay
// is shaped to 100 Mbit/s (the bandwidth condition, a token bucket), an
// rr probe beside four TCP streams waits behind the streams' queue: its
// median round trip rises clearly over the same probe's idle one, the
// load's throughput is recorded per interval near the rate, and the
// idle case runs no load.
func TestProbeUnderLoadRisesOnRateLimitedLink(t *testing.T) {
	testutil.RequireRoot(t)
	s, err := spec.Parse(strings.NewReader(`
name: rrul
modes: [bare]
conditions:
  bandwidth: 100mbit
tests:
  - workload: rr
    duration: 3s
    omit: 1s
    repetitions: 2
    sweep: {param: under_load, values: [0, 4]}
`), "rrul.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := runSpec(t, s)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	rd, err := record.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := rd.Contents()
	if err != nil {
		t.Fatal(err)
	}
	loadIn := map[string]int{}
	for _, r := range c.Records {
		if r.Kind == record.KindLoad {
			loadIn[r.Value]++
		}
	}
	if loadIn["0"] != 0 || loadIn["4"] == 0 {
		t.Errorf("load records by under_load: %v; want none idle, some under load", loadIn)
	}
	uls := analysis.UnderLoads(c.Records, func(m string) string { return m })
	if len(uls) != 1 {
		t.Fatalf("%d probes under load, want 1: %+v", len(uls), uls)
	}
	u := uls[0]
	t.Logf("idle p50 %.0f µs p99 %.0f µs; loaded p50 %.0f µs p99 %.0f µs; inflation p50 %.1f [%.1f, %.1f]; load %.1f Mbit/s; %d points",
		u.Idle.P50, u.Idle.P99, u.Loaded.P50, u.Loaded.P99, u.P50.Ratio, u.P50.Lo, u.P50.Hi, u.LoadBits/1e6, len(u.Timeline))
	if u.Idle.Reps != 2 || u.Loaded.Reps != 2 {
		t.Errorf("repetitions idle %d loaded %d, want 2 each", u.Idle.Reps, u.Loaded.Reps)
	}
	// A full 100 Mbit/s token bucket holds milliseconds of queue; an idle
	// round trip on a bare lab is tens of microseconds.
	if !(u.Loaded.P50 > 3*u.Idle.P50) || !(u.P50.Ratio > 3) {
		t.Errorf("loaded p50 %.0f µs is not clearly over idle %.0f µs (ratio %.2f)", u.Loaded.P50, u.Idle.P50, u.P50.Ratio)
	}
	if u.LoadBits < 50e6 || u.LoadBits > 110e6 {
		t.Errorf("load %.1f Mbit/s, want near the 100 Mbit/s bucket", u.LoadBits/1e6)
	}
	if len(u.Timeline) < 3 {
		t.Fatalf("timeline of %d points", len(u.Timeline))
	}
	for _, p := range u.Timeline[1:] {
		if p.Bits != p.Bits || p.P50 <= 0 {
			t.Errorf("timeline point %+v lacks the load's throughput or the probe's latency", p)
		}
	}
}
