package analysis

import (
	"math"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

// One fan-out cell: four client containers, the first with two processes;
// throughput adds up, reordered datagrams too, loss is averaged, and per container
// the headline is summed over its processes.
func TestFanOutObservation(t *testing.T) {
	total := func(client string, proc int, mbps, loss float64) record.Record {
		r := rec(t, "bridge", 7, 0, "stream clients=4", "stream", record.KindTotal, map[string]any{"workload": "stream", "protocol": "udp",
			"duration_s": 10, "receiver_bits_per_second": mbps * 1e6, "receiver_bytes": int64(mbps * 1e6 / 8 * 10), "loss_percent": loss, "out_of_order": 1})
		r.Client, r.Process, r.Server = client, proc, "server1"
		return r
	}
	recs := []record.Record{
		total("client1", 0, 50, 1), total("client1", 1, 50, 3),
		total("client2", 0, 100, 0), total("client3", 0, 100, 0), total("client4", 0, 300, 0),
	}
	obs := Observations(recs, nil, nil, nil, func(m string) string { return m })
	if len(obs) != 1 {
		t.Fatalf("%d observations, want 1 for the cell", len(obs))
	}
	v := obs[0].Values
	for _, tc := range []struct {
		key  string
		want float64
	}{
		{"throughput", 600}, // summed
		{"loss", 0.8},       // averaged over the five clients
		{"out_of_order", 5}, // summed
		{"clients", 4},      // containers, not processes
		{"per_client", 150}, // 100, 100, 100, 300
		{"fairness", 0.75},  // 600² / (4 × 120000)
	} {
		if got, ok := v[tc.key]; !ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", tc.key, got, ok, tc.want)
		}
	}
	if _, ok := (Observations(recs[2:3], nil, nil, nil, func(m string) string { return m })[0].Values["fairness"]); !ok {
		t.Error("one client container: fairness 1 expected, none given")
	}
	cases := Cases(obs, []string{"bridge"}, "", 2)
	var keys []string
	for _, m := range cases[0].Metrics {
		keys = append(keys, m.Key)
	}
	for _, want := range []string{"per_client", "fairness"} {
		found := false
		for _, k := range keys {
			found = found || k == want
		}
		if !found {
			t.Errorf("case metrics %v lack %s", keys, want)
		}
	}
}

func TestJain(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{5, 5, 5, 5}, 1},
		{[]float64{10, 0, 0, 0}, 0.25},
		{[]float64{1, 2}, 0.9},
	} {
		if got := jain(tc.xs); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("jain(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
	if !math.IsNaN(jain([]float64{0, 0})) {
		t.Error("jain of nothing measured should be NaN")
	}
}
