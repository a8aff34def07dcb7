// Package runtest runs a spec through run.Run on a given catalogue, as the
// architecture's recipe tests do (a toy driver, a toy mode), and checks
// what every such run must leave: a complete run with samples, and no lab
// and no namespace of it on the machine.
package runtest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/run"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil"
)

// Run parses doc (a spec named name), runs it on cat with the test's
// cnperf binary and returns the result and its run directory, having
// checked that it completed with samples and that nothing it made is left.
func Run(t *testing.T, cat lab.Catalog, name, doc string) (*run.Result, string) {
	t.Helper()
	return RunExe(t, cat, testutil.Binary(t), name, doc)
}

// RunExe is Run with exe as the binary the servers and clients run (a
// test's own, that serves a workload only the test declares).
func RunExe(t *testing.T, cat lab.Catalog, exe, name, doc string) (*run.Result, string) {
	t.Helper()
	s, err := spec.Parse(strings.NewReader(doc), name+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	var out strings.Builder
	res, err := run.Run(context.Background(), run.Options{Spec: s, Dir: dir,
		Exe: exe, Version: "test", Out: &out, Lab: cat})
	if err != nil || res == nil || res.Meta == nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if res.Meta.Status != "complete" || res.Samples == 0 {
		t.Errorf("status %s with %d samples, want complete with some\n%s", res.Meta.Status, res.Samples, out.String())
	}
	for _, c := range res.Meta.Cells {
		if c.Error != "" || c.Failed > 0 {
			t.Errorf("cell %d: %d failed, error %q", c.Index, c.Failed, c.Error)
		}
	}
	// The drivers it ran on only: another's state may be root's alone.
	for _, name := range s.RunDrivers() {
		d, err := cat.Driver(name)
		if err != nil {
			t.Fatal(err)
		}
		labs, err := d.Labs()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range labs {
			if strings.HasPrefix(l.Name, res.Meta.ID+"_") {
				t.Errorf("lab %s left behind", l.Name)
			}
		}
	}
	if nss, _ := namespace.List(lab.Prefix + res.Meta.ID + "_"); len(nss) > 0 {
		t.Errorf("namespaces left behind: %v", nss)
	}
	return res, dir
}

// SmallPingPong is the ping-pong section of a recipe test's spec: a
// handful of sizes up to 100 kB, two repetitions, two in flight, in
// chunks of five. A test writes its own name, modes and reference above.
const SmallPingPong = `pingpong:
  min_size: 1
  max_size: 100000
  coverage: 0.0001
  repetitions: 2
  concurrency: 2
  seed: 7
  chunk: 5
  retries: 3
  timeout: 10s
  max_body: 16777216
  port: 8080
`

// ShortStream is the tests section of a recipe test's spec: one TCP
// stream test of two seconds.
const ShortStream = `tests:
  - workload: stream
    duration: 2s
`
