package run_test

import (
	"io"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestPingPongBesideStream: a spec with a ping-pong test and a stream
// test runs both on bare and bridge, their cells interleaved; the run
// records both kinds of cells and lines, and its summary shows both.
func TestPingPongBesideStream(t *testing.T) {
	testutil.RequireRoot(t)
	res, dir := runtest.Run(t, drivers.Catalog(), "both", `name: both
driver: netns
modes: [bare, bridge]
reference: bare
tests:
  - workload: pingpong
    min_size: 1
    max_size: 100000
    coverage: 0.0001
    repetitions: 2
    chunk: 5
    timeout: 10s
  - {workload: stream, duration: 1s, repetitions: 2}
`)
	var kinds []string // per cell: pingpong or the case
	for _, c := range res.Meta.Cells {
		kind := "pingpong"
		if c.Case != "" {
			kind = c.Case
		}
		kinds = append(kinds, kind)
		if c.Samples == 0 {
			t.Errorf("cell %d (%s on %s): no samples", c.Index, kind, c.Mode)
		}
	}
	first := func(k string) int { return indexOf(kinds, k, false) }
	last := func(k string) int { return indexOf(kinds, k, true) }
	if first("pingpong") < 0 || first("stream") < 0 || first("stream") > last("pingpong") || first("pingpong") > last("stream") {
		t.Errorf("cells %v: want ping-pong and stream cells interleaved", kinds)
	}
	rd, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	contents, _, err := rd.Contents()
	if err != nil {
		t.Fatal(err)
	}
	if len(contents.PingPong) == 0 || len(contents.Records) == 0 {
		t.Errorf("%d ping-pong samples, %d socket records: want both", len(contents.PingPong), len(contents.Records))
	}
	run, err := report.ReadRun(dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := report.Summary(&out, run, "", true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"run ping-pong", "run tests", "stream", "bridge"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary has no %q:\n%s", want, out.String())
		}
	}
	t.Logf("summary:\n%s", out.String())
}

// indexOf is the first (or last) index of k in ks, -1 if none.
func indexOf(ks []string, k string, last bool) int {
	at := -1
	for i, x := range ks {
		if x == k {
			at = i
			if !last {
				break
			}
		}
	}
	return at
}
