package analysis

import (
	"math"
	"slices"
	"testing"
)

// TestWithinVariants: in a run comparing clusters, each series is compared
// with the reference mode on its own cluster (k8s-pod/flannel against
// k8s-host/flannel), with intervals from the units paired with that
// reference's; and k8s-pod on one cluster compares with k8s-pod on the
// other with an interval, by naming that series as the reference.
func TestWithinVariants(t *testing.T) {
	// Throughput per unit: the flannel cluster's host network is 20 %
	// slower than the bridge cluster's (another machine, say), and each
	// cluster's pods lose 10 % (bridge) and 40 % (flannel) of their host's.
	base := map[string]float64{"k8s-host/bridge": 1000, "k8s-pod/bridge": 900, "k8s-host/flannel": 800, "k8s-pod/flannel": 480}
	series := []string{"k8s-host/bridge", "k8s-host/flannel", "k8s-pod/bridge", "k8s-pod/flannel"}
	var obs []Observation
	cell := 0
	for rep := range 6 {
		for _, s := range series {
			v := base[s] * (1 + 0.01*float64(rep%3)) // drift every series shares on a unit
			obs = append(obs, Observation{Series: s, Case: "stream", Work: "stream", Cell: cell, Unit: rep, Values: map[string]float64{"throughput": v}})
			cell++
		}
	}
	refs := map[string]string{"k8s-host/bridge": "k8s-host/bridge", "k8s-pod/bridge": "k8s-host/bridge",
		"k8s-host/flannel": "k8s-host/flannel", "k8s-pod/flannel": "k8s-host/flannel"}
	cases := CasesWithin(obs, series, Within(refs), 2)
	mean := func(cs []Case, s string) Change {
		for _, row := range cs[0].Rows {
			if row.Series == s {
				return row.Stats["throughput"].Mean
			}
		}
		t.Fatalf("no row %s", s)
		return Change{}
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if p := mean(cases, "k8s-pod/flannel").Percent; !near(p, -40) {
		t.Errorf("k8s-pod/flannel's mean against its reference: %g %%, want -40 %% (against k8s-host/flannel)", p)
	}
	if p := mean(cases, "k8s-pod/bridge").Percent; !near(p, -10) {
		t.Errorf("k8s-pod/bridge's mean against its reference: %g %%, want -10 %%", p)
	}
	if c := mean(cases, "k8s-host/flannel").Class; c != "ref" {
		t.Errorf("k8s-host/flannel is its own reference: class %q, want ref", c)
	}
	within := map[string]RatioCI{}
	for _, c := range IntervalsWithin(cases, Within(refs)) {
		if c.Metric.Key == "throughput" {
			within[c.Mode] = c
		}
	}
	if len(within) != 2 || !near(within["k8s-pod/flannel"].Ratio, 0.6) || !within["k8s-pod/flannel"].Known() ||
		!(within["k8s-pod/flannel"].Lo <= 0.6 && 0.6 <= within["k8s-pod/flannel"].Hi) {
		t.Errorf("intervals within each cluster: %+v, want k8s-pod on each against its own host, flannel's 0.6 inside a known interval", within)
	}
	// One reference for all: the first cluster's host, as a run without
	// clusters compares, gives flannel's pods 0.48: the clusters' hosts'
	// difference, not the CNI's.
	if p := mean(CasesWithin(obs, series, One("k8s-host/bridge"), 2), "k8s-pod/flannel").Percent; !near(p, -52) {
		t.Errorf("against the first cluster's host: %g %%, want -52 %%", p)
	}
	// k8s-pod across clusters, with its interval.
	var across *RatioCI
	for _, c := range Intervals(Cases(obs, series, "k8s-pod/bridge", 2), "k8s-pod/bridge") {
		if c.Metric.Key == "throughput" && c.Mode == "k8s-pod/flannel" {
			across = &c
		}
	}
	if across == nil || !near(across.Ratio, 480.0/900) || !across.Known() {
		t.Errorf("k8s-pod/flannel against k8s-pod/bridge: %+v, want %g with a known interval", across, 480.0/900)
	}
}

// TestSweepRowsWithin: a ping-pong sweep's table gives each mode's ratio to
// its own reference, and a mode whose reference the sweep lacks none.
func TestSweepRowsWithin(t *testing.T) {
	samples, cells := pingPongRun(4, 1, []float64{0.5})
	// "a" and "b" of pingPongRun as host and pod of one cluster; "c", a
	// copy of "a" under another name, as a host of another cluster, and
	// "d" as a pod whose host is missing.
	for _, s := range slices.Clone(samples) {
		if s.Mode == "a" {
			s.Mode = "c"
			samples = append(samples, s)
		}
	}
	set := NewSweep(samples, cells, []string{"a", "b", "c"})
	refs := map[string]string{"a": "a", "b": "a", "c": "c", "d": "x"}
	for _, r := range set.RowsWithin(Within(refs)) {
		switch r.Mode {
		case "b":
			if !near(r.TransferRatio, 0.5) {
				t.Errorf("b against its own a: transfer ratio %g, want 0.5", r.TransferRatio)
			}
		case "a", "c":
			if !near(r.TransferRatio, 1) {
				t.Errorf("%s against itself: %g, want 1", r.Mode, r.TransferRatio)
			}
		}
	}
	for _, r := range set.RowsWithin(Within(map[string]string{"b": "x"})) {
		if !math.IsNaN(r.TransferRatio) && r.TransferRatio != 0 {
			t.Errorf("%s without its reference in the sweep: ratio %g, want none", r.Mode, r.TransferRatio)
		}
	}
}
