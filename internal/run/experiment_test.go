package run

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
)

// TestBothInterleaves: a spec with a ping-pong test and socket tests runs
// one experiment whose units are both parts', spread over the run in
// proportion, each numbered as its kind numbers it, on a lab with the
// hosts of both.
func TestBothInterleaves(t *testing.T) {
	s, err := spec.Parse(strings.NewReader(`name: x
modes: [bare, bridge]
tests:
  - {workload: pingpong, max_size: 100, coverage: 0.5, chunk: 10}
  - {workload: stream, duration: 1s, repetitions: 2}
`), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := s.Cases()
	if err != nil {
		t.Fatal(err)
	}
	b := newExperiment(newPingPong(s), newSocketCells(s, cases))
	var got []string
	for u := range b.units() {
		var c record.Cell
		b.describeCell(u, &c)
		if c.Case == "" {
			got = append(got, fmt.Sprintf("pp%d", c.Chunk))
		} else {
			got = append(got, fmt.Sprintf("%s/%d/%d", c.Case, c.Chunk, c.Rep))
		}
	}
	want := "pp0 stream/0/0 pp1 pp2 stream/1/1 pp3 pp4"
	if strings.Join(got, " ") != want {
		t.Errorf("units %v, want %s", got, want)
	}
	var hosts []string
	for _, h := range b.labConfig().Topology.Hosts {
		hosts = append(hosts, h.Name)
	}
	if strings.Join(hosts, " ") != "siege ping pong client server" {
		t.Errorf("hosts %v", hosts)
	}
}
