package toytest_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/modes/toytest"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestMain removes the cnperf binary the tests built (testutil.Binary).
func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// catalog is the binary's catalogue with the toy mode added: the one
// registry line a mode needs (in the binary, a line in modes.All).
func catalog() lab.Catalog {
	cat := drivers.Catalog()
	cat.Modes = append(cat.Modes, toytest.Mode{})
	return cat
}

// TestToyModeRunsWorkloads: a mode is its package plus one registry line.
// The toy runs a stream test beside bare and ping-pong through run.Run
// like any mode, its shaping shows in the figures, and nothing is left.
func TestToyModeRunsWorkloads(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the netns driver makes network namespaces")
	}
	cat := catalog()
	for _, tc := range []struct{ name, yaml string }{
		{"stream", `name: toymode-stream
modes: [bare, toy-shaped]
reference: bare
` + runtest.ShortStream},
		{"pingpong", `name: toymode-pingpong
modes: [toy-shaped]
reference: toy-shaped
` + runtest.SmallPingPong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, dir := runtest.Run(t, cat, tc.name, tc.yaml)
			if tc.name == "stream" {
				checkShaped(t, dir)
			}
		})
	}
}

// checkShaped: the toy's stream stays under its NIC's 200 Mbit/s while
// bare's, on the same machine in the same run, does not.
func checkShaped(t *testing.T, dir string) {
	t.Helper()
	r, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sockets, _, err := r.Contents()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, rec := range sockets.Records {
		if rec.Kind != record.KindTotal {
			continue
		}
		var end struct {
			Received float64 `json:"receiver_bits_per_second"`
		}
		if err := json.Unmarshal(rec.Data, &end); err == nil && end.Received > 0 {
			got[rec.Mode] = end.Received
		}
	}
	if toy := got[toytest.Name]; toy == 0 || toy > 210e6 {
		t.Errorf("toy-shaped stream %.0f bit/s, want some and at most 200 Mbit/s (all: %v)", toy, got)
	}
	if got["bare"] < 400e6 {
		t.Errorf("bare stream %.0f bit/s beside the toy, want far above the toy's 200 Mbit/s (all: %v)", got["bare"], got)
	}
}
