package machine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/testutil"
)

// TestNetworkOverBareLab measures a stream across a bare lab and leaves
// no lab behind.
func TestNetworkOverBareLab(t *testing.T) {
	testutil.RequireRoot(t)
	bps, err := Network(context.Background(), drivers.Catalog(), testutil.Binary(t), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if bps < 1e6 {
		t.Errorf("%g bit/s between two namespaces", bps)
	}
	labs, err := drivers.Catalog().List()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range labs {
		if strings.HasPrefix(l.Name, "mprof") {
			t.Errorf("lab %s left behind", l.Name)
		}
	}
}
