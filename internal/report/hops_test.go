package report

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/workload"
)

// TestHopsFigureAndTable: a chain run's latency gets a figure with the
// summed segments beside each mode and a table with the difference;
// throughput a figure of its own without sums.
func TestHopsFigureAndTable(t *testing.T) {
	c := func(test int, work, param, value, key string, mean float64) analysis.Case {
		return analysis.Case{Label: work + " " + param + "=" + value, Workload: work, Test: test, Param: param, Value: value,
			Metrics: []workload.Metric{{Key: key, Title: key, Unit: "u"}},
			Rows: []analysis.CaseRow{{Series: "bare", N: 3, Stats: map[string]analysis.CaseStat{key: {N: 3,
				Mean: analysis.Change{Value: mean}, SD: analysis.Change{Value: 1}}}}}}
	}
	cases := []analysis.Case{
		c(0, "rr", "hops", "1", "rtt_p50", 20), c(0, "rr", "hops", "2", "rtt_p50", 45), c(0, "rr", "segment", "2", "rtt_p50", 21),
		c(1, "stream", "hops", "1", "throughput", 1000), c(1, "stream", "hops", "2", "throughput", 400),
	}
	r := &Report{}
	r.addHops(cases, []string{"bare"})
	if len(r.Figures) != 2 || len(r.Tables) != 2 {
		t.Fatalf("%d figures, %d tables, want 2 and 2", len(r.Figures), len(r.Tables))
	}
	lat := r.Tables[0]
	if len(lat.Columns) != 7 || len(lat.Rows) != 2 || lat.Rows[1][4].Text != "41.00" || lat.Rows[1][5].Text != "4.00" || lat.Rows[1][6].Text != "25.00" {
		t.Errorf("latency table %+v, want 2 hops: sum 41, difference 4", lat)
	}
	if tp := r.Tables[1]; len(tp.Columns) != 4 || tp.Rows[1][3].Text != "0.400" {
		t.Errorf("throughput table %+v", tp)
	}
	if !strings.Contains(r.Figures[0].Title, "against hops") {
		t.Errorf("figure %q", r.Figures[0].Title)
	}
}

// TestChainSweepsChartApart: a chain's rr test sweeps hops, then
// segments; each gets its own chart, not one axis mixing both.
func TestChainSweepsChartApart(t *testing.T) {
	c := func(param, value string) analysis.Case {
		return analysis.Case{Label: "lat " + param + "=" + value, Workload: "rr", Test: 0, Param: param, Value: value,
			Metrics: []workload.Metric{{Key: "rtt_p50", Title: "RTT", Unit: "µs"}},
			Rows:    []analysis.CaseRow{{Series: "bare", N: 1, Stats: map[string]analysis.CaseStat{"rtt_p50": {N: 1, Mean: analysis.Change{Value: 1}}}}}}
	}
	r := &Report{}
	r.addCases([]analysis.Case{c("hops", "1"), c("hops", "2"), c("segment", "2")}, []string{"bare"}, DefaultOptions())
	var ids []string
	for _, f := range r.Figures {
		ids = append(ids, f.ID)
	}
	if len(ids) != 2 || ids[0] != "fig-test0-rtt_p50" || ids[1] != "fig-test1-rtt_p50" {
		t.Errorf("figures %v, want one for the hops and one for the segments", ids)
	}
}
