package siege

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/pingpong/server"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// serveOn serves h on 127.0.0.1 until the test ends and returns its URL.
func serveOn(t *testing.T, h fasthttp.RequestHandler) string {
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

// closedURL returns an http URL on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// pingPong starts pong (counting its hits) and a ping in front of it.
func pingPong(t *testing.T, pongMax int) (pingURL string, pongHits *atomic.Int64) {
	t.Helper()
	hits := new(atomic.Int64)
	pong := server.NewPongHandler(pongMax)
	pongURL := serveOn(t, func(ctx *fasthttp.RequestCtx) {
		hits.Add(1)
		pong(ctx)
	})
	ping, err := server.NewPingHandler(server.PingConfig{PongURL: pongURL + "/", Retries: 2, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, ping), hits
}

func TestRun(t *testing.T) {
	pingURL, pongHits := pingPong(t, 1<<20)
	plan := pingpong.PlanConfig{Min: 0, Max: 200000, Coverage: 0.0002, Repetitions: 3, Seed: 11}
	reqs := requests(plan.Sizes(), plan.Repetitions)
	if len(reqs) != 120 {
		t.Fatalf("plan gives %d requests, want 120", len(reqs))
	}
	for _, conc := range []int{1, 4} {
		t.Run("concurrency"+string(rune('0'+conc)), func(t *testing.T) {
			before := pongHits.Load()
			var samples []record.Sample
			var inEmit atomic.Int32
			start := time.Now()
			err := Run(context.Background(), Config{Target: pingURL, Concurrency: conc, Timeout: 10 * time.Second}, reqs,
				func(s record.Sample) {
					if inEmit.Add(1) != 1 {
						t.Error("emit called concurrently")
					}
					time.Sleep(100 * time.Microsecond) // widen the window for overlap
					samples = append(samples, s)
					inEmit.Add(-1)
				})
			if err != nil {
				t.Fatalf("Siege: %v", err)
			}
			if len(samples) != len(reqs) {
				t.Fatalf("%d samples for %d requests", len(samples), len(reqs))
			}
			if d := pongHits.Load() - before; d != int64(len(reqs)) {
				t.Errorf("pong saw %d requests, want %d", d, len(reqs))
			}
			got := make([]pingpong.Request, len(samples))
			for i, s := range samples {
				got[i] = pingpong.Request{Size: s.Size, Rep: s.Rep}
				if !s.OK() || s.Code != 200 || s.Length != max(s.Size, 4) || s.Error != "" || s.Retries != 0 {
					t.Errorf("sample %d: %+v", i, s)
				}
				if s.Workload != "pingpong" {
					t.Errorf("workload %q", s.Workload)
				}
				if !(s.DurationMS > 0 && s.LatencyMS >= s.DurationMS) {
					t.Errorf("sample %d: duration %v ms, latency %v ms: want 0 < duration <= latency", i, s.DurationMS, s.LatencyMS)
				}
				if s.Time.Before(start) || s.Time.After(time.Now()) {
					t.Errorf("sample %d: time %v outside the run", i, s.Time)
				}
			}
			if conc == 1 && !reflect.DeepEqual(got, reqs) {
				t.Errorf("concurrency 1: samples not in plan order")
			}
			cmp := func(a, b pingpong.Request) int {
				if a.Size != b.Size {
					return a.Size - b.Size
				}
				return a.Rep - b.Rep
			}
			want := slices.Clone(reqs)
			slices.SortFunc(got, cmp)
			slices.SortFunc(want, cmp)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("samples do not cover the requests one to one")
			}
		})
	}
}

// TestSiegeConcurrency checks that Concurrency requests really are in flight
// together: pong holds each answer until 4 are waiting.
func TestRunConcurrency(t *testing.T) {
	const conc = 4
	var waiting atomic.Int32
	release := make(chan struct{})
	pong := server.NewPongHandler(100)
	pongURL := serveOn(t, func(ctx *fasthttp.RequestCtx) {
		if waiting.Add(1) == conc {
			close(release)
		}
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		pong(ctx)
	})
	ping, err := server.NewPingHandler(server.PingConfig{PongURL: pongURL})
	if err != nil {
		t.Fatal(err)
	}
	pingURL := serveOn(t, ping)

	reqs := requests([]int{10, 20}, 2)
	var n int
	begin := time.Now()
	err = Run(context.Background(), Config{Target: pingURL, Concurrency: conc}, reqs, func(s record.Sample) {
		n++
		if !s.OK() {
			t.Errorf("sample %+v", s)
		}
	})
	if err != nil || n != len(reqs) {
		t.Fatalf("Siege: %v, %d samples", err, n)
	}
	if el := time.Since(begin); el > 4*time.Second {
		t.Errorf("took %v: the %d requests were not concurrent", el, conc)
	}
}

// TestRunTCPInfo: siege reads TCP_INFO of each of its connections to ping
// as it closes, the idle ones at the end: with two in flight, two
// connections (or a third: net/http puts a connection back in its pool
// after the body's EOF has reached the reader, so a worker's next request
// may dial once before it is back; far fewer than the 12 requests), no
// retransmits on loopback, an RTT and a window.
func TestRunTCPInfo(t *testing.T) {
	pingURL, _ := pingPong(t, 1000)
	var got *tcpinfo.Stats
	called := 0
	cfg := Config{Target: pingURL, Concurrency: 2, TCP: func(s *tcpinfo.Stats) { got = s; called++ }}
	if err := Run(context.Background(), cfg, requests([]int{10, 100, 1000}, 4), func(record.Sample) {}); err != nil {
		t.Fatal(err)
	}
	if called != 1 || got == nil {
		t.Fatalf("TCP called %d times with %+v", called, got)
	}
	if got.Connections < 1 || got.Connections > 4 || got.Retransmits != 0 || got.RTTUS <= 0 || got.CwndMin < 1 {
		t.Errorf("TCP_INFO of siege's connections: %+v", *got)
	}
}

func TestRunErrorsKeepGoing(t *testing.T) {
	reqs := requests([]int{1, 2, 3}, 2)

	// Nothing listens: transport errors, one sample each, Code 0.
	var samples []record.Sample
	err := Run(context.Background(), Config{Target: closedURL(t), Concurrency: 2, Timeout: 2 * time.Second}, reqs,
		func(s record.Sample) { samples = append(samples, s) })
	if err != nil {
		t.Fatalf("Siege: %v", err)
	}
	if len(samples) != len(reqs) {
		t.Fatalf("%d samples for %d requests", len(samples), len(reqs))
	}
	for _, s := range samples {
		if s.Error == "" || s.Code != 0 || s.OK() {
			t.Errorf("transport error sample: %+v", s)
		}
	}

	// A server that is not ping: undecodable bodies.
	notPing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello\nworld"))
	}))
	defer notPing.Close()
	samples = nil
	if err := Run(context.Background(), Config{Target: notPing.URL}, reqs, func(s record.Sample) { samples = append(samples, s) }); err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if s.Error == "" || s.Code != 0 || len(samples) != len(reqs) {
			t.Errorf("undecodable sample: %+v", s)
		}
		for _, c := range s.Error {
			if c == '\n' {
				t.Errorf("error %q is not one line", s.Error)
			}
		}
	}
}

func TestRunPongDown(t *testing.T) {
	ping, err := server.NewPingHandler(server.PingConfig{PongURL: closedURL(t), Retries: 2, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pingURL := serveOn(t, ping)
	var samples []record.Sample
	if err := Run(context.Background(), Config{Target: pingURL}, requests([]int{64}, 2), func(s record.Sample) {
		samples = append(samples, s)
	}); err != nil {
		t.Fatal(err)
	}
	if len(samples) != 2 {
		t.Fatalf("%d samples", len(samples))
	}
	for _, s := range samples {
		if s.Code != 503 || s.Retries != 2 || s.Length != 0 || s.Error != "" || s.OK() {
			t.Errorf("pong down: %+v, want code 503 retries 2 and no error", s)
		}
	}
}

func TestRunCancel(t *testing.T) {
	pingURL, _ := pingPong(t, 1000)
	reqs := requests([]int{10, 20, 30, 40, 50}, 40)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := Run(ctx, Config{Target: pingURL, Concurrency: 2}, reqs, func(s record.Sample) {
		if !s.OK() {
			t.Errorf("emitted a failed sample: %+v", s)
		}
		n++
		if n == 5 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Siege after cancel = %v, want context.Canceled", err)
	}
	if n < 5 || n > 7 {
		t.Errorf("%d samples emitted, want 5 plus at most the in-flight ones", n)
	}

	// Already cancelled: nothing is sent.
	n = 0
	err = Run(ctx, Config{Target: pingURL}, reqs, func(record.Sample) { n++ })
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("pre-cancelled Siege = %v with %d samples", err, n)
	}
}

// TestSiegeCancelInFlight cancels while a request hangs: Siege must return
// promptly and not emit the aborted request.
func TestRunCancelInFlight(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hang.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	n := 0
	begin := time.Now()
	err := Run(ctx, Config{Target: hang.URL}, requests([]int{1}, 3), func(record.Sample) { n++ })
	if !errors.Is(err, context.DeadlineExceeded) || n != 0 {
		t.Errorf("Siege = %v with %d samples, want DeadlineExceeded and none", err, n)
	}
	if el := time.Since(begin); el > 3*time.Second {
		t.Errorf("Siege took %v to notice the cancellation", el)
	}
}

func TestRunBadConfig(t *testing.T) {
	url := closedURL(t)
	for _, cfg := range []Config{
		{Target: "not a url"}, {Target: "ftp://x"}, {Target: ""},
		{Target: url, Concurrency: -1}, {Target: url, Concurrency: int(pingpong.Bound("concurrency").Max) + 1}, {Target: url, Concurrency: math.MaxInt},
		{Target: url, Timeout: -1}, {Target: url, Timeout: pingpong.MaxTimeout + 1},
	} {
		n := 0
		err := Run(context.Background(), cfg, requests([]int{1}, 1), func(record.Sample) { n++ })
		if err == nil || n != 0 || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: Siege = %v after %d samples, want a one-line error and none", cfg, err, n)
		}
	}
	for _, reps := range []int{0, -1, pingpong.MaxRepetitions + 1, 1 << 62} {
		if err := RunPlan(context.Background(), Config{Target: url}, []int{1, 2}, reps, func(record.Sample) {}); err == nil {
			t.Errorf("SiegePlan with %d repetitions accepted", reps)
		}
	}
	if err := pingpong.CheckTarget("ftp://x"); err == nil {
		t.Error("pingpong.CheckTarget(ftp://x) = nil")
	}
	for _, n := range []int{0, -1, int(pingpong.Bound("concurrency").Max) + 1} {
		if pingpong.Check("concurrency", n) == nil {
			t.Errorf("pingpong.Check(concurrency, %d) = nil", n)
		}
	}
}

// TestSiegePlan: SiegePlan sends what Siege sends for requests(sizes, reps),
// in the same order.
func TestRunPlan(t *testing.T) {
	pingURL, _ := pingPong(t, 1000)
	sizes := []int{7, 0, 300, 2}
	var plan, list []pingpong.Request
	if err := RunPlan(context.Background(), Config{Target: pingURL}, sizes, 3, func(s record.Sample) {
		plan = append(plan, pingpong.Request{Size: s.Size, Rep: s.Rep})
		if !s.OK() {
			t.Errorf("sample %+v", s)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), Config{Target: pingURL}, requests(sizes, 3), func(s record.Sample) {
		list = append(list, pingpong.Request{Size: s.Size, Rep: s.Rep})
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plan, list) || !reflect.DeepEqual(plan, requests(sizes, 3)) {
		t.Errorf("SiegePlan sent %v, Siege %v", plan, list)
	}
}

// TestSiegeLengths: a ping reporting code 200 with a body that is no whole
// pong body for the size makes an error sample, not a good message; the
// lengths the pongs answer below 4 bytes are good.
func TestRunLengths(t *testing.T) {
	fake := serveOn(t, func(ctx *fasthttp.RequestCtx) {
		arg, _ := bytes.CutPrefix(ctx.Path(), []byte("/mping/"))
		n, _ := strconv.Atoi(string(arg))
		length := map[int]int{0: 4, 1: 4, 2: 3, 3: 3, 5: 4, 6: 7, 8: 8}[n]
		fmt.Fprintf(ctx, `{"length": %d, "code": 200, "retries": 0, "duration": 0.5}`, length)
	})
	var samples []record.Sample
	if err := Run(context.Background(), Config{Target: fake}, requests([]int{0, 1, 2, 3, 5, 6, 8}, 1), func(s record.Sample) {
		samples = append(samples, s)
	}); err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		wantOK := s.Size != 5 && s.Size != 6
		if s.OK() != wantOK || (s.Error == "") != wantOK || s.Code != 200 || s.DurationMS != 0.5 {
			t.Errorf("size %d, length %d: OK %v, error %q; want OK %v", s.Size, s.Length, s.OK(), s.Error, wantOK)
		}
	}
}

// TestLengthRuleAgrees: a stored sample is judged whole (record.Sample.OK)
// by the rule ping and pong judge a body by (pingpong.LengthOK); the two
// packages cannot share the function, so this keeps them one rule.
func TestLengthRuleAgrees(t *testing.T) {
	for size := 0; size < 12; size++ {
		for length := 0; length < 14; length++ {
			got := record.Sample{Code: 200, Size: size, Length: length}.OK()
			if want := pingpong.LengthOK(size, length); got != want {
				t.Errorf("size %d, length %d: record says %v, pingpong %v", size, length, got, want)
			}
		}
	}
}

// requests repeats each size reps times back to back, keeping the plan's
// random size order (as ppbench does).
func requests(sizes []int, reps int) []pingpong.Request {
	out := make([]pingpong.Request, 0, len(sizes)*reps)
	for _, s := range sizes {
		for r := range reps {
			out = append(out, pingpong.Request{Size: s, Rep: r})
		}
	}
	return out
}
