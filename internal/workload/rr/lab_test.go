package rr_test

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
	"github.com/cnperf/cnperf/internal/workload/rr"
)

// TestLossyLinkRetransmits: on a bare lab whose zone link (cnperf's delay
// line) drops 5 % of the frames each way, tcp and crr record the client's
// retransmits from TCP_INFO, with an RTT and a congestion window, in the
// stored run's total records. A lost frame costs a crr transaction a
// retransmission timeout (200 ms, a SYN's 1 s): eight workers for 5 s
// make a couple of hundred connections, of which a few dozen retransmit.
func TestLossyLinkRetransmits(t *testing.T) {
	testutil.RequireRoot(t)
	s, err := spec.Parse(strings.NewReader(`name: rr-loss
driver: netns
modes: [bare]
reference: bare
conditions: {zone_loss: 5, zone_via: delayline}
tests:
  - workload: rr
    protocol: crr
    parallel: 8
    duration: 5s
  - workload: rr
    protocol: tcp
    parallel: 2
    request: 1000
    response: 1000
    duration: 3s
`), "rr-loss.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res, err := run.Run(context.Background(), run.Options{Spec: s, Dir: filepath.Join(t.TempDir(), "run"), Exe: testutil.Binary(t),
		Version: "test", Out: &out, Lab: drivers.Catalog()})
	if err != nil || res == nil || res.Meta == nil {
		t.Fatalf("run: %v\n%s", err, out.String())
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
	seen := map[string]bool{}
	for _, r := range socks.Records {
		if r.Workload != "rr" || r.Kind != record.KindTotal {
			continue
		}
		var got rr.Result
		if err := json.Unmarshal(r.Data, &got); err != nil {
			t.Fatal(err)
		}
		seen[got.Protocol] = true
		tcp := got.TCP
		if tcp == nil {
			t.Errorf("%s: no TCP_INFO in the record", got.Protocol)
			continue
		}
		t.Logf("%s: %d transactions, TCP_INFO %+v", got.Protocol, got.Transactions, *tcp)
		if got.Transactions == 0 || tcp.Retransmits == 0 || tcp.RTTUS <= 0 || tcp.CwndMin < 1 {
			t.Errorf("%s over a link losing 5 %%: %d transactions, TCP_INFO %+v; want retransmits, an RTT and a window",
				got.Protocol, got.Transactions, *tcp)
		}
		if got.Protocol == rr.ProtocolCRR && tcp.Connections != got.Transactions {
			t.Errorf("crr: TCP_INFO of %d connections for %d transactions", tcp.Connections, got.Transactions)
		}
	}
	if !seen[rr.ProtocolCRR] || !seen[rr.ProtocolTCP] {
		t.Errorf("total records for %v, want crr and tcp", seen)
	}
}
