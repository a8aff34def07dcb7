package registry_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// FuzzStoredTest reads a test as a run's JSON holds it (outside input: a
// run may come from anywhere): it never panics, and one that expands
// reads back, written again, to the same client.
func FuzzStoredTest(f *testing.F) {
	f.Add([]byte(`{"workload":"rr","protocol":"udp","duration":2000000000,"omit":1000000000,"request":64,"busy_poll":false}`))
	f.Add([]byte(`{"workload":"stream","length":"1400","copy":1,"sweep":{"param":"length","from":1000,"to":2000,"step":500}}`))
	f.Add([]byte(`{"workload":"datagram","count":1e3,"rate":10,"timeout":[1]}`))
	f.Add([]byte(`{"workload":"grid","length":-1,"timeout":"1m","clients":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tc workload.Test
		if json.Unmarshal(b, &tc) != nil {
			return
		}
		tests := []workload.Test{tc}
		registry.Canonical(tests)
		cases, err := registry.Expand(tests)
		if err != nil {
			return
		}
		again, err := json.Marshal(tests[0])
		if err != nil {
			t.Fatalf("%s: written: %v", b, err)
		}
		var back workload.Test
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("%s: read back %s: %v", b, again, err)
		}
		backs := []workload.Test{back}
		registry.Canonical(backs)
		cs, err := registry.Expand(backs)
		if err != nil || len(cs) != len(cases) {
			t.Fatalf("%s: read back %s: %d cases, %v; want %d", b, again, len(cs), err, len(cases))
		}
		for i := range cases {
			if a, z := cases[i].ClientArgs("h"), cs[i].ClientArgs("h"); !slices.Equal(a, z) {
				t.Fatalf("%s: client %q, read back %q", b, a, z)
			}
		}
	})
}
