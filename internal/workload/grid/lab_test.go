package grid_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/run"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/grid"
)

// runGrid runs a two-second grid test on the spec's modes in throwaway
// labs and returns each series' total and the run's record, checking that
// no lab is left.
func runGrid(t *testing.T, yaml string) (map[string]grid.Result, *record.Meta) {
	t.Helper()
	s, err := spec.Parse(strings.NewReader(yaml), "grid test")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	var out strings.Builder
	res, err := run.Run(context.Background(), run.Options{Spec: s, Dir: dir, Exe: testutil.Binary(t), Version: "test", Out: &out, Lab: drivers.Catalog()})
	if err != nil || res == nil || res.Meta == nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	labs, err := drivers.Catalog().List()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range labs {
		if strings.HasPrefix(l.Name, res.Meta.ID+"_") {
			t.Errorf("lab %s left behind", l.Name)
		}
	}
	for _, c := range res.Meta.Cells {
		if c.Error != "" {
			t.Errorf("cell %d on %s: %s", c.Index, c.Mode, c.Error)
		}
	}
	rd, err := record.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	socks, _, err := rd.Contents()
	if err != nil {
		t.Fatal(err)
	}
	totals := map[string]grid.Result{}
	for _, r := range socks.Records {
		if r.Workload == "grid" && r.Kind == record.KindTotal {
			var g grid.Result
			if err := json.Unmarshal(r.Data, &g); err != nil {
				t.Fatalf("%s: %v", r.Mode, err)
			}
			totals[r.Mode] = g
		}
	}
	return totals, res.Meta
}

// checkPuts checks each series' puts, the member's CPU and memory, and
// that its gossip port was published with the grid's.
func checkPuts(t *testing.T, totals map[string]grid.Result, meta *record.Meta, modes ...string) {
	t.Helper()
	gossip := grid.GossipPort(descriptors.GridPort)
	for _, mm := range meta.Modes {
		u := mm.Usage["grid-server"]
		published := 0
		for _, p := range mm.Lab.Publish {
			if p.Number == gossip {
				published++
			}
		}
		if u.CPUSeconds <= 0 || u.Source == "" || published != 2 {
			t.Errorf("%s: member usage %+v, gossip published over %d protocols (want tcp and udp)", mm.Mode, u, published)
		}
	}
	for _, m := range modes {
		g, ok := totals[m]
		if !ok {
			t.Errorf("%s: no total", m)
			continue
		}
		t.Logf("%-16s %6d puts (%5.0f/s), put p50 %5.0f µs, p99 %5.0f µs, %d failed", m, g.Puts, g.PutsPerSec, g.Put.P50, g.Put.P99, g.Failures())
		if g.Puts < 100 || g.Failures() != 0 {
			t.Errorf("%s: %d puts, %d failures", m, g.Puts, g.Failures())
		}
	}
}

// TestGridCountsPutsOnEveryMode: the grid client joins the member across
// the lab and counts puts on every netns mode the socket tests run on,
// NAT (bridge: published ports) and the overlay included.
func TestGridCountsPutsOnEveryMode(t *testing.T) {
	testutil.RequireRoot(t)
	modes := []string{"bare", "host", "bridge", "macvlan", "overlay"}
	totals, meta := runGrid(t, `name: grid-modes
driver: netns
modes: [bare, host, bridge, macvlan, overlay]
reference: bare
tests:
  - workload: grid
    duration: 2s
`)
	checkPuts(t, totals, meta, modes...)
}

// TestGridCountsPutsOnDocker: the same on the docker driver's bridge, with
// the member and the client in containers of real engines.
func TestGridCountsPutsOnDocker(t *testing.T) {
	testutil.RequireDocker(t)
	totals, meta := runGrid(t, `name: grid-docker
driver: docker
modes: [bridge]
reference: bridge
tests:
  - workload: grid
    duration: 2s
`)
	if _, driver := meta.SplitSeries("bridge"); driver != "docker" {
		t.Errorf("bridge ran on the %q driver", driver)
	}
	checkPuts(t, totals, meta, "bridge")
}
