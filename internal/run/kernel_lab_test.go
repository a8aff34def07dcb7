package run_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestCellsRecordKernelTime: a short stream test on bare, bridge and the
// user-space overlay (its routers pinned with the hosts to core 0)
// records, in every cell, softirq time and NET_RX softirqs above zero and
// the bytes the cell moved, over the pinned core too; the overlay's
// routers are read at rest before the first cell, the other modes run no
// daemons and record none.
func TestCellsRecordKernelTime(t *testing.T) {
	testutil.RequireRoot(t)
	res, _ := runtest.Run(t, drivers.Catalog(), "kernel-time", `name: kernel-time
driver: netns
modes: [bare, bridge, overlay-userspace]
reference: bare
variants:
  - {name: pinned, cores: 1}
`+runtest.ShortStream)
	if len(res.Meta.Cells) == 0 {
		t.Fatal("no cells")
	}
	for _, c := range res.Meta.Cells {
		k := c.Kernel
		if k == nil {
			t.Errorf("cell %d (%s): no kernel record", c.Index, c.Mode)
			continue
		}
		t.Logf("cell %d %s: user %.2f s, system %.2f s, softirq %.2f s of %.2f s; busiest core %d at %.1f %% softirq; NET_RX %d, NET_TX %d; %d bytes; pinned %+v",
			c.Index, c.Mode, k.UserSeconds, k.SystemSeconds, k.SoftirqSeconds, k.CPUSeconds, k.BusiestCore, k.BusiestSoftirqPercent, k.NetRX, k.NetTX, k.Bytes, k.Pinned)
		if !k.Sane() || k.SoftirqSeconds <= 0 || k.NetRX == 0 || k.Bytes <= 0 || k.SystemSeconds <= 0 {
			t.Errorf("cell %d (%s): kernel %+v: want softirq and system time, NET_RX softirqs and bytes", c.Index, c.Mode, *k)
		}
		if p := k.Pinned; p == nil || len(p.Cores) != 1 || p.Cores[0] != 0 || p.CPUSeconds <= 0 || p.CPUSeconds >= k.CPUSeconds {
			t.Errorf("cell %d (%s): pinned %+v: want core 0 alone", c.Index, c.Mode, p)
		}
	}
	for _, mm := range res.Meta.Modes {
		overlay := strings.HasPrefix(mm.Mode, "overlay-userspace")
		if (mm.Idle != nil) != overlay {
			t.Errorf("%s: idle record %+v", mm.Mode, mm.Idle)
			continue
		}
		if !overlay {
			continue
		}
		t.Logf("%s at rest over %.2f s: %+v", mm.Mode, mm.Idle.WindowSeconds, mm.Idle.Daemons)
		routers := 0
		for name, d := range mm.Idle.Daemons {
			if strings.HasPrefix(name, "router-") {
				routers++
			}
			if d.MemoryBytes <= 0 || d.CPUPercent < 0 || d.CPUPercent > 100 {
				t.Errorf("%s: daemon %s at rest %+v", mm.Mode, name, d)
			}
		}
		if routers == 0 || mm.Idle.WindowSeconds < 1.5 {
			t.Errorf("%s: idle %+v: want its routers over about 2 s", mm.Mode, mm.Idle)
		}
	}
}
