package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/report/export"
	"github.com/cnperf/cnperf/internal/workload/pingpong/server"
)

func mainOut(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(drivers.Catalog(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestSiegePingPongBadInput: bad values for siege, serve pong and serve ping
// are one-line errors with exit code 2, before anything listens or sends.
func TestSiegePingPongBadInput(t *testing.T) {
	const tgt = "http://127.0.0.1:1"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"siege", "--target", tgt, "--repetitions", "4611686018427387904"}, "--repetitions must be in 1..100000"},
		{[]string{"siege", "--target", tgt, "--repetitions", "0"}, "--repetitions must be in 1..100000"},
		{[]string{"siege", "--target", "ftp://x"}, `--target "ftp://x": scheme must be http or https`},
		{[]string{"siege", "--target", "http://"}, "--target"},
		{[]string{"siege", "--target", tgt, "--max", "4294967297"}, "--max must be at most 4294967296"},
		{[]string{"siege", "--target", tgt, "--min", "-1"}, "--min must be >= 0"},
		{[]string{"siege", "--target", tgt, "--min", "0", "--max", "4294967296", "--coverage", "1"}, "--coverage draws 4294967297 sizes"},
		{[]string{"siege", "--target", tgt, "--coverage", "NaN"}, "--coverage must be in (0, 1]"},
		{[]string{"siege", "--target", tgt, "--concurrency", "1025"}, "--concurrency 1025: must be in 1..1024"},
		{[]string{"siege", "--target", tgt, "--concurrency", "-3"}, "--concurrency -3"},
		{[]string{"siege", "--target", tgt, "--timeout", "2h"}, "--timeout 2h0m0s: must be > 0 and at most 1h0m0s"},
		{[]string{"siege", "--target", tgt, "--timeout", "-1s"}, "--timeout -1s"},
		{[]string{"serve", "pong", "--max-size", "1000000000000000"}, "--max-size 1000000000000000: must be in 0..4294967296"},
		{[]string{"serve", "pong", "--max-size", "-1"}, "--max-size -1"},
		{[]string{"serve", "pong", "--max-size", "99999999999999999999"}, "max-size"},
		{[]string{"serve", "ping", "--retries", "-1"}, "--retries -1: must be in 0..1000"},
		{[]string{"serve", "ping", "--retries", "1001"}, "--retries 1001: must be in 0..1000"},
		{[]string{"serve", "ping", "--timeout", "0s"}, "--timeout 0s"},
		{[]string{"serve", "ping", "--timeout", "61m"}, "--timeout 1h1m0s"},
		{[]string{"serve", "ping", "--pong", "ftp://x"}, "--pong"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := mainOut(tt.args...)
			if code != ExitUsage || stdout != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing", code, stdout, ExitUsage)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "cnperf: ") || !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q: want one line with %q", stderr, tt.want)
			}
		})
	}
}

// serveLoopback serves h on 127.0.0.1 until the test ends.
func serveLoopback(t *testing.T, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, ln, h) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

// TestSiegePPBenchFormat: siege's ppbench log has ppbench's header, one row
// per size, every field quoted, and its floats as Ruby writes them.
func TestSiegePPBenchFormat(t *testing.T) {
	pong := serveLoopback(t, server.NewPongHandler(1<<20))
	h, err := server.NewPingHandler(server.PingConfig{PongURL: pong})
	if err != nil {
		t.Fatal(err)
	}
	ping := serveLoopback(t, h)
	code, stdout, stderr := mainOut("siege", "--target", ping, "--min", "0", "--max", "3000", "--coverage", "0.005",
		"--repetitions", "3", "--concurrency", "2", "--format", "ppbench", "--machine", "m", "--experiment", "e")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if want := `"Machine Tag","Experiment Tag","Document Path","Failed requests","Concurrency Level","Total transferred","Time per request","Transfer rate","Requests per second","Retries","Response Code"`; lines[0] != want {
		t.Errorf("header %s", lines[0])
	}
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+15 { // floor(3001 × 0.005) sizes
		t.Errorf("%d rows, want 15 (one per size)", len(recs)-1)
	}
	quoted := regexp.MustCompile(`^("[^"]*",){10}"[^"]*"$`)
	rubyF := regexp.MustCompile(`^-?[0-9]+\.[0-9]+(e[+-][0-9]{2,})?$`)
	sizes := map[string]bool{}
	for i, rec := range recs[1:] {
		if !quoted.MatchString(lines[i+1]) {
			t.Errorf("row %s: not every field quoted", lines[i+1])
		}
		if rec[0] != "m" || rec[1] != "e" || rec[3] != "0" || rec[4] != "2" || rec[9] != "0" || rec[10] != "200" {
			t.Errorf("row %v", rec)
		}
		for _, name := range []string{"Total transferred", "Time per request", "Transfer rate", "Requests per second"} {
			if v := rec[indexOf(export.PPBenchHeader, name)]; !rubyF.MatchString(v) {
				t.Errorf("row %v: %s %q is no Ruby float", rec, name, v)
			}
		}
		if sizes[rec[2]] {
			t.Errorf("size %s has two rows", rec[2])
		}
		sizes[rec[2]] = true
	}
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// TestSiegeFailedSizes: a size whose every repetition failed is named on
// stderr, in one line, with how many got no ppbench row (ppbench drops a
// size none of whose requests was answered); siege still exits 0.
func TestSiegeFailedSizes(t *testing.T) {
	ping := serveLoopback(t, func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/mping/17": // no answer at all
			ctx.HijackSetNoResponse(true)
			ctx.Hijack(func(net.Conn) {})
		case "/mping/18": // ping gave up: answered, code 503
			ctx.SetBodyString(`{"length": 0, "code": 503, "retries": 100, "duration": 1.5}`)
		default: // a whole body of the size asked for
			size := strings.TrimPrefix(string(ctx.Path()), "/mping/")
			ctx.SetBodyString(`{"length": ` + size + `, "code": 200, "retries": 0, "duration": 0.5}`)
		}
	})
	tests := []struct {
		format, wantLine string
		rows             []string // ppbench: the sizes with a row
	}{
		{"ppbench", "cnperf siege: every request failed for 2 of 3 sizes: 17, 18; the ppbench log has no row for 1 of them (not one answer)\n", []string{"/mping/5", "/mping/18"}},
		{"jsonl", "cnperf siege: every request failed for 2 of 3 sizes: 17, 18\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			code, stdout, stderr := mainOut("siege", "--target", ping, "--sizes", "5,17,18", "--repetitions", "2", "--timeout", "5s", "--format", tc.format)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if stderr != tc.wantLine {
				t.Errorf("stderr %q, want %q", stderr, tc.wantLine)
			}
			if tc.format != "ppbench" {
				if n := strings.Count(stdout, "\n"); n != 6 {
					t.Errorf("%d samples, want 6 (every request, failed ones too)", n)
				}
				return
			}
			recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, rec := range recs[1:] {
				got = append(got, rec[2])
			}
			if strings.Join(got, " ") != strings.Join(tc.rows, " ") {
				t.Errorf("rows for %v, want %v", got, tc.rows)
			}
		})
	}
	// Nothing failed: nothing on stderr.
	code, _, stderr := mainOut("siege", "--target", ping, "--sizes", "5,6", "--format", "ppbench")
	if code != 0 || stderr != "" {
		t.Errorf("exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
}
