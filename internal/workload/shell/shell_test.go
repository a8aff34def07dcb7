package shell_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/shell"
)

// run executes a client of w with args, its Run recording what it got and
// returning err.
func run(t *testing.T, w workload.Socket, err error, args ...string) (shell.Run, string, error) {
	t.Helper()
	var got shell.Run
	var out bytes.Buffer
	cmd := shell.Command(workload.Console{Stdout: &out, Stderr: io.Discard}, shell.Client{Workload: w,
		Time: 10 * time.Second, Interval: time.Second,
		Run: func(_ context.Context, r shell.Run) error {
			got = r
			r.Start()
			return err
		}})
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetOut(io.Discard)
	err = cmd.Execute()
	return got, out.String(), err
}

func TestFlagsFromTheDeclaration(t *testing.T) {
	r, out, err := run(t, descriptors.Stream, nil, "-c", "198.18.0.2", "-t", "3", "-i", "500ms", "-u", "-P", "4", "-l", "32K", "-b", "10M", "--omit", "2s", "--json")
	if err != nil {
		t.Fatal(err)
	}
	p := r.Params
	if r.Server != "198.18.0.2:5201" || r.Time != 3*time.Second || r.Interval != 500*time.Millisecond || !r.JSON {
		t.Errorf("common flags: %+v", r)
	}
	if p.Text("protocol") != "udp" || p.Int("parallel") != 4 || p.Int("length") != 32<<10 || p.Text("rate") != "10M" || p.Dur("omit") != 2*time.Second || p.Bool("copy") {
		t.Errorf("parameters %v", p)
	}
	if !strings.HasPrefix(out, `{"workload":"stream","kind":"start","server":"198.18.0.2:5201","settings":{`) || !strings.Contains(out, `"parallel":"4"`) {
		t.Errorf("start line %q", out)
	}
	if r, _, _ := run(t, descriptors.Stream, nil, "-c", "[2001:2::1]"); r.Server != "[2001:2::1]:5201" || r.Params.Set("protocol") || r.Params.Int("parallel") != 1 {
		t.Errorf("defaults: %q %v", r.Server, r.Params)
	}
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		w    workload.Socket
		args []string
		want string
	}{
		{descriptors.Stream, []string{}, "--server: give the server's address"},
		{descriptors.Stream, []string{"-c", "h:99999"}, `--server "h:99999": bad port`},
		{descriptors.Stream, []string{"-c", "h", "-u", "-l", "70000"}, "--length 70000 is above the largest UDP datagram (65507)"},
		{descriptors.Stream, []string{"-c", "h", "-P", "0"}, "--parallel 0: must be at least 1"},
		{descriptors.Stream, []string{"-c", "h", "-P", "200"}, "--parallel 200 is outside 1..128"},
		{descriptors.RR, []string{"-c", "h", "--mode", "sctp"}, `--protocol "sctp" is not a protocol of rr (tcp, udp, crr)`},
		{descriptors.RR, []string{"-c", "h", "--timeout", "2h"}, "--timeout 2h0m0s is outside 0s..1h0m0s"},
		{descriptors.Datagram, []string{"-c", "h", "--count", "x"}, "want a whole number"},
		{descriptors.Grid, []string{"-c", "h", "-t", "soon"}, "want a duration such as 10s"},
	} {
		if _, _, err := run(t, tc.w, nil, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v, want %q", tc.w.Name(), tc.args, err, tc.want)
		}
	}
}

// TestExitKinds: a failure stays one (exit 1), any other error is bad
// input (exit 2), and a canceled measurement is an interruption (130).
func TestExitKinds(t *testing.T) {
	failed := workload.Fail(errors.New("connection refused"))
	if _, _, err := run(t, descriptors.RR, failed, "-c", "h"); !errors.As(err, new(workload.Failure)) {
		t.Errorf("failure: %v", err)
	}
	if _, _, err := run(t, descriptors.RR, errors.New("--request 9: no"), "-c", "h"); err == nil || errors.As(err, new(workload.Failure)) {
		t.Errorf("bad input: %v", err)
	}
	_, _, err := run(t, descriptors.RR, workload.Fail(context.Canceled), "-c", "h")
	if !errors.Is(err, context.Canceled) || err.Error() != "interrupted; printed what was measured: context canceled" {
		t.Errorf("interrupted: %v", err)
	}
}

// TestAliasTakesTheOlderName: rr's protocol was --mode before the word
// mode named network setups only; the older name still sets it.
func TestAliasTakesTheOlderName(t *testing.T) {
	for _, args := range [][]string{{"-c", "h", "--protocol", "crr"}, {"-c", "h", "--mode", "crr"}} {
		got, _, err := run(t, descriptors.RR, nil, args...)
		if err != nil || got.Params["protocol"] != "crr" {
			t.Errorf("%q: protocol %v, error %v; want crr", args, got.Params["protocol"], err)
		}
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"10M", 10_000_000, false}, {"100m", 100_000_000, false}, {"1.5G", 1_500_000_000, false},
		{"0", 0, false}, {"500k", 500_000, false}, {"123", 123, false},
		{"", 0, true}, {"M", 0, true}, {"-1M", 0, true}, {"10X", 0, true}, {"NaN", 0, true}, {"1e30", 0, true},
	}
	for _, tc := range tests {
		got, err := shell.ParseRate(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseRate(%q) = %d, %v", tc.in, got, err)
		}
	}
}
