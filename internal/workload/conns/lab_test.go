package conns_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/conntrack"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// TestFullConntrackTable: on a bridge lab whose conntrack table is set
// below the connections asked for, the client counts connections that
// could not be made, the cell records the table's entries and the
// kernel's drops, and once the run is over the machine's nf_conntrack_max
// is its own again and no lab is left.
func TestFullConntrackTable(t *testing.T) {
	testutil.RequireRoot(t)
	if _, err := os.Stat(conntrack.MaxFile); err != nil {
		t.Skipf("no connection tracking on this kernel: %v", err)
	}
	orig := conntrack.Max()
	res, dir := runtest.Run(t, drivers.Catalog(), "conns-full", `name: conns-full
driver: netns
modes: [bridge]
reference: bridge
conditions: {conntrack_max: 1500}
tests:
  - workload: conns
    connections: 2000
    timeout: 1s
    duration: 2s
`)
	if got := conntrack.Max(); got != orig {
		t.Errorf("nf_conntrack_max %d after the run, want the machine's %d back", got, orig)
	}
	if len(res.Meta.Cells) != 1 || res.Meta.Cells[0].Conntrack == nil {
		t.Fatalf("cells %+v: want one with its conntrack record", res.Meta.Cells)
	}
	ct := res.Meta.Cells[0].Conntrack
	entries, _, drops := ct.Sums()
	t.Logf("conntrack: %+v", *ct)
	if ct.Max != 1500 || entries == 0 || drops == 0 {
		t.Errorf("conntrack during the cell: max %d, %d entries, %d drops; want 1500, entries and drops", ct.Max, entries, drops)
	}
	rd, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	socks, _, err := rd.Contents()
	if err != nil {
		t.Fatal(err)
	}
	var got descriptors.ConnsResult
	for _, r := range socks.Records {
		if r.Workload == descriptors.ConnsName && r.Kind == record.KindTotal {
			if err := json.Unmarshal(r.Data, &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("client: %+v", got)
	if got.Requested != 2000 || got.Established >= 2000 || got.TimedOut+got.Refused == 0 || got.RoundTrip.P50 <= 0 {
		t.Errorf("client %+v: want fewer than 2000 established, the rest timed out or refused, and the probe's round trip", got)
	}
}
