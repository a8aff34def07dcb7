package run

import (
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil"
)

// TestPingPongPlacement: with placement apart, ping-pong's roles are
// placed as a socket lab's: siege on a host of its own, ping and pong as
// two containers on one server host; every request comes back whole and
// each cell has its cost line.
func TestPingPongPlacement(t *testing.T) {
	testutil.RequireRoot(t)
	s := spec.Default()
	s.Name, s.Modes, s.Reference = "placed", []string{"bare", "bridge", "overlay"}, "bare"
	s.Placement = &spec.Placement{Hosts: spec.HostsApart}
	pp := &s.PingPong
	pp.MinSize, pp.MaxSize, pp.Coverage, pp.Repetitions, pp.Chunk, pp.Timeout = 1, 100000, 0.0001, 2, 5, 10*time.Second
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := runSpec(t, s)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	rd, err := record.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := rd.Contents()
	if err != nil {
		t.Fatal(err)
	}
	want := len(s.PingPong.Plan().Sizes()) * s.PingPong.Repetitions * len(s.Modes)
	if len(c.PingPong) != want {
		t.Errorf("%d samples, want %d", len(c.PingPong), want)
	}
	for _, smp := range c.PingPong {
		if !smp.OK() {
			t.Errorf("bad sample: %+v", smp)
		}
	}
	if len(c.Costs) != len(res.Meta.Cells) {
		t.Errorf("%d cost lines for %d cells", len(c.Costs), len(res.Meta.Cells))
	}
	for _, mm := range res.Meta.Modes {
		hosts := map[string]string{}
		for _, ep := range mm.Lab.Endpoints {
			hosts[ep.Role] = ep.Host
		}
		if hosts["ping"] != "server" || hosts["pong"] != "server" {
			t.Errorf("%s: ping and pong on %v, want both on the server host", mm.Mode, hosts)
		}
	}
}
