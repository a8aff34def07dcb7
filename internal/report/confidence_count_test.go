package report

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/workload"
)

// TestIntervalTableGivesCountsTheirDifference: the interval of a count's
// change is the difference's, in counts; a ratio's stays in percent.
func TestIntervalTableGivesCountsTheirDifference(t *testing.T) {
	retrans := workload.Metric{Key: "retransmits", Title: "TCP retransmits", Unit: "segments", Short: "retrans", Additive: true, Count: true}
	tput := workload.Metric{Key: "throughput", Title: "Throughput", Unit: "Mbit/s", Short: "Mbit/s", HigherIsBetter: true}
	cis := []analysis.RatioCI{
		{Case: "stream", Mode: "overlay", Metric: tput, Interval: analysis.Interval{Ratio: 0.8, Lo: 0.75, Hi: 0.85, Units: 6, Instances: 3}},
		{Case: "stream", Mode: "overlay", Metric: retrans, Interval: analysis.Interval{Ratio: 722.2, Lo: 199.6, Hi: 3288.2, Units: 6, Instances: 3},
			Diff: &analysis.DiffInterval{Diff: 9375, Lo: 2581, Hi: 42735, Units: 6, Instances: 3}},
	}
	var b strings.Builder
	if err := WriteIntervalTable(&b, cis, "bare"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"-20.0 %", "[-25.0 %, -15.0 %]", "+9375", "[+2581, +42735]"} {
		if !strings.Contains(out, want) {
			t.Errorf("interval table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "72120") || strings.Contains(out, "+72") {
		t.Errorf("a count's change in percent:\n%s", out)
	}
}
