package toytest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/drivers/toytest"
	"github.com/cnperf/cnperf/internal/run"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestMain removes the cnperf binary the tests built (testutil.Binary).
func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }

// TestToyDriverRunsWorkloads: a driver is its package plus one registry
// line. The toy's, appended to the binary's drivers, runs a socket test
// and ping-pong through run.Run as any driver does, and leaves nothing.
func TestToyDriverRunsWorkloads(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the toy driver makes network namespaces")
	}
	cat := drivers.Catalog(toytest.Driver{}) // the registry line
	for _, tc := range []struct{ name, yaml string }{
		{"stream", `name: toy-stream
driver: toy
modes: [bare]
reference: bare
` + runtest.ShortStream},
		{"pingpong", `name: toy-pingpong
driver: toy
modes: [bare]
reference: bare
` + runtest.SmallPingPong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := runtest.Run(t, cat, tc.name, tc.yaml)
			if len(res.Meta.Modes) != 1 || res.Meta.Modes[0].Driver != toytest.Name {
				t.Errorf("modes %+v, want bare on the toy driver", res.Meta.Modes)
			}
		})
	}
}

// TestToyDriverIsRefusedWhereItCannot: what the toy cannot build is
// refused in the spec's words before anything is built.
func TestToyDriverIsRefusedWhereItCannot(t *testing.T) {
	cat := drivers.Catalog(toytest.Driver{})
	s, err := spec.Parse(strings.NewReader("name: toy\ndriver: toy\nmodes: [bare, overlay]\nreference: bare\n"), "toy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.NewPlan(run.Options{Spec: s, Lab: cat})
	if err == nil || !strings.Contains(err.Error(), "modes[1]: overlay cannot be built on the toy driver (it builds bare)") {
		t.Errorf("Check = %v, want overlay refused on the toy driver", err)
	}
	// Without the registry line the toy is no driver.
	_, err = run.NewPlan(run.Options{Spec: s, Lab: drivers.Catalog()})
	if err == nil || !strings.Contains(err.Error(), `driver "toy": unknown`) {
		t.Errorf("Check without the toy = %v, want the driver unknown", err)
	}
}
