package run

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil"
)

// pythonSpec is a small ping-pong spec whose servers are the Python ones in
// testdata; pongExtra, when set, makes pong answer that many bytes too many.
func pythonSpec(t *testing.T, modes []string, pongExtra string) spec.Spec {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed (scripts/install-deps.sh installs it)")
	}
	dir, err := filepath.Abs("testdata/pingpong-py")
	if err != nil {
		t.Fatal(err)
	}
	s := spec.Default()
	s.Name, s.Modes, s.Reference = "servers", modes, modes[0]
	pp := &s.PingPong
	pp.MinSize, pp.MaxSize, pp.Coverage, pp.Repetitions, pp.Chunk = 1, 100000, 0.0001, 2, 5
	pp.Retries, pp.Timeout, pp.MaxBody = 3, 10*time.Second, 1<<24
	pong := []string{py, filepath.Join(dir, "pong.py"), "{listen}"}
	if pongExtra != "" {
		pong = append(pong, pongExtra)
	}
	pp.Servers = &spec.Servers{Ping: []string{py, filepath.Join(dir, "ping.py"), "{listen}", "{pong_host}", "{pong_port}"}, Pong: pong}
	return s
}

// runSpec runs s into a temporary directory and checks that it left no lab.
func runSpec(t *testing.T, s spec.Spec) (*Result, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	var out strings.Builder
	res, err := Run(context.Background(), Options{Spec: s, Dir: dir, Exe: testutil.Binary(t), Version: "test", Out: &out, Lab: drivers.Catalog()})
	if res == nil || res.Meta == nil {
		t.Fatalf("no result: %v\n%s", err, out.String())
	}
	labs, lerr := drivers.Catalog().List()
	if lerr != nil {
		t.Fatal(lerr)
	}
	for _, l := range labs {
		if strings.HasPrefix(l.Name, res.Meta.ID+"_") {
			t.Errorf("lab %s left behind", l.Name)
		}
	}
	return res, err
}

// TestPythonServersAnswerSiege runs the protocol in Python in place of
// cnperf's servers: every sample of cnperf's siege is good, and run.json
// says which servers ran.
func TestPythonServersAnswerSiege(t *testing.T) {
	testutil.RequireRoot(t)
	s := pythonSpec(t, []string{"bare", "bridge"}, "")
	res, err := runSpec(t, s)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	rd, err := record.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	read, _, err := rd.Contents()
	if err != nil {
		t.Fatal(err)
	}
	samples := read.PingPong
	want := len(s.PingPong.Plan().Sizes()) * s.PingPong.Repetitions * len(s.Modes)
	if len(samples) != want {
		t.Errorf("%d samples, want %d", len(samples), want)
	}
	for _, smp := range samples {
		if !smp.OK() {
			t.Errorf("bad sample: %+v", smp)
		}
	}
	var meta record.Meta
	if err := rd.Meta(&meta); err != nil {
		t.Fatal(err)
	}
	if sv := meta.Spec.PingPong.Servers; sv == nil || !strings.HasSuffix(sv.Ping[1], "ping.py") || sv.Pong[2] != "{listen}" {
		t.Errorf("run.json's servers = %+v, want the spec's", sv)
	}
}

// TestWrongLengthServerIsNamed: a pong that answers one byte too many is
// refused before measuring, in one line naming its command.
func TestWrongLengthServerIsNamed(t *testing.T) {
	testutil.RequireRoot(t)
	s := pythonSpec(t, []string{"bare"}, "1")
	res, err := runSpec(t, s)
	if err == nil {
		t.Fatal("run with a wrong-length pong succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"pong server", "pong.py", "does not answer the ping-pong protocol", "/pong/1000", "1001 bytes"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	if res.Meta.Status != "failed" {
		t.Errorf("status %q, want failed", res.Meta.Status)
	}
}

// TestMissingServerCommandIsBadInput: Check refuses a command this machine
// does not have, before any lab.
func TestMissingServerCommandIsBadInput(t *testing.T) {
	s := spec.Default()
	s.Name, s.Modes = "servers", []string{"bare"}
	s.PingPong.Servers = &spec.Servers{Pong: []string{"no-such-pong-server-xyz", "{listen}"}}
	_, err := NewPlan(Options{Spec: s, Lab: drivers.Catalog()})
	if err == nil || !strings.Contains(err.Error(), `pingpong.servers.pong: command "no-such-pong-server-xyz"`) {
		t.Fatalf("Check = %v, want the missing command named", err)
	}
}
