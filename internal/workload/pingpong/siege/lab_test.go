package siege_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestCellsRecordTCPInfo: every ping-pong cell of a run on a bare lab
// records TCP_INFO of siege's connections to ping in run.json, as siege's
// end line carried it.
func TestCellsRecordTCPInfo(t *testing.T) {
	testutil.RequireRoot(t)
	res, _ := runtest.Run(t, drivers.Catalog(), "pp-tcpinfo", `name: pp-tcpinfo
driver: netns
modes: [bare]
reference: bare
`+runtest.SmallPingPong)
	if len(res.Meta.Cells) == 0 {
		t.Fatal("no cells")
	}
	for _, c := range res.Meta.Cells {
		tcp := c.TCP
		if tcp == nil {
			t.Errorf("cell %d: no TCP_INFO", c.Index)
			continue
		}
		t.Logf("cell %d: %d samples, TCP_INFO %+v", c.Index, c.Samples, *tcp)
		// Two requests in flight: one or two connections, unless the
		// transport dropped one.
		if tcp.Connections < 1 || tcp.RTTUS <= 0 || tcp.CwndMin < 1 {
			t.Errorf("cell %d: TCP_INFO %+v: want connections, an RTT and a window", c.Index, *tcp)
		}
	}
}
