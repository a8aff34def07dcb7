package pingpong

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
)

func TestSiege(t *testing.T) {
	pingURL, pongHits := pingPong(t, 1<<20)
	plan := PlanConfig{Min: 0, Max: 200000, Coverage: 0.0002, Repetitions: 3, Seed: 11}
	reqs := Requests(plan.Sizes(), plan.Repetitions)
	if len(reqs) != 120 {
		t.Fatalf("plan gives %d requests, want 120", len(reqs))
	}
	for _, conc := range []int{1, 4} {
		t.Run("concurrency"+string(rune('0'+conc)), func(t *testing.T) {
			before := pongHits.Load()
			var samples []Sample
			var inEmit atomic.Int32
			start := time.Now()
			err := Siege(context.Background(), SiegeConfig{Target: pingURL, Concurrency: conc, Timeout: 10 * time.Second}, reqs,
				func(s Sample) {
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
			got := make([]Request, len(samples))
			for i, s := range samples {
				got[i] = Request{s.Size, s.Rep}
				if !s.OK() || s.Code != 200 || s.Length != BodyLen(s.Size) || s.Error != "" || s.Retries != 0 {
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
			cmp := func(a, b Request) int {
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
func TestSiegeConcurrency(t *testing.T) {
	const conc = 4
	var waiting atomic.Int32
	release := make(chan struct{})
	pong := NewPongHandler(100)
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
	ping, err := NewPingHandler(PingConfig{PongURL: pongURL})
	if err != nil {
		t.Fatal(err)
	}
	pingURL := serveOn(t, ping)

	reqs := Requests([]int{10, 20}, 2)
	var n int
	begin := time.Now()
	err = Siege(context.Background(), SiegeConfig{Target: pingURL, Concurrency: conc}, reqs, func(s Sample) {
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

func TestSiegeErrorsKeepGoing(t *testing.T) {
	reqs := Requests([]int{1, 2, 3}, 2)

	// Nothing listens: transport errors, one sample each, Code 0.
	var samples []Sample
	err := Siege(context.Background(), SiegeConfig{Target: closedURL(t), Concurrency: 2, Timeout: 2 * time.Second}, reqs,
		func(s Sample) { samples = append(samples, s) })
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
	if err := Siege(context.Background(), SiegeConfig{Target: notPing.URL}, reqs, func(s Sample) { samples = append(samples, s) }); err != nil {
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

func TestSiegePongDown(t *testing.T) {
	ping, err := NewPingHandler(PingConfig{PongURL: closedURL(t), Retries: 2, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pingURL := serveOn(t, ping)
	var samples []Sample
	if err := Siege(context.Background(), SiegeConfig{Target: pingURL}, Requests([]int{64}, 2), func(s Sample) {
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

func TestSiegeCancel(t *testing.T) {
	pingURL, _ := pingPong(t, 1000)
	reqs := Requests([]int{10, 20, 30, 40, 50}, 40)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := Siege(ctx, SiegeConfig{Target: pingURL, Concurrency: 2}, reqs, func(s Sample) {
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
	err = Siege(ctx, SiegeConfig{Target: pingURL}, reqs, func(Sample) { n++ })
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("pre-cancelled Siege = %v with %d samples", err, n)
	}
}

// TestSiegeCancelInFlight cancels while a request hangs: Siege must return
// promptly and not emit the aborted request.
func TestSiegeCancelInFlight(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hang.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	n := 0
	begin := time.Now()
	err := Siege(ctx, SiegeConfig{Target: hang.URL}, Requests([]int{1}, 3), func(Sample) { n++ })
	if !errors.Is(err, context.DeadlineExceeded) || n != 0 {
		t.Errorf("Siege = %v with %d samples, want DeadlineExceeded and none", err, n)
	}
	if el := time.Since(begin); el > 3*time.Second {
		t.Errorf("Siege took %v to notice the cancellation", el)
	}
}

func TestSiegeBadConfig(t *testing.T) {
	url := closedURL(t)
	for _, cfg := range []SiegeConfig{
		{Target: "not a url"}, {Target: "ftp://x"}, {Target: ""},
		{Target: url, Concurrency: -1}, {Target: url, Concurrency: MaxConcurrency + 1}, {Target: url, Concurrency: math.MaxInt},
		{Target: url, Timeout: -1}, {Target: url, Timeout: MaxTimeout + 1},
	} {
		n := 0
		err := Siege(context.Background(), cfg, Requests([]int{1}, 1), func(Sample) { n++ })
		if err == nil || n != 0 || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: Siege = %v after %d samples, want a one-line error and none", cfg, err, n)
		}
	}
	for _, reps := range []int{0, -1, MaxRepetitions + 1, 1 << 62} {
		if err := SiegePlan(context.Background(), SiegeConfig{Target: url}, []int{1, 2}, reps, func(Sample) {}); err == nil {
			t.Errorf("SiegePlan with %d repetitions accepted", reps)
		}
	}
	if err := CheckTarget("ftp://x"); err == nil {
		t.Error("CheckTarget(ftp://x) = nil")
	}
	for _, n := range []int{0, -1, MaxConcurrency + 1} {
		if CheckConcurrency(n) == nil {
			t.Errorf("CheckConcurrency(%d) = nil", n)
		}
	}
}

// TestSiegePlan: SiegePlan sends what Siege sends for Requests(sizes, reps),
// in the same order.
func TestSiegePlan(t *testing.T) {
	pingURL, _ := pingPong(t, 1000)
	sizes := []int{7, 0, 300, 2}
	var plan, list []Request
	if err := SiegePlan(context.Background(), SiegeConfig{Target: pingURL}, sizes, 3, func(s Sample) {
		plan = append(plan, Request{s.Size, s.Rep})
		if !s.OK() {
			t.Errorf("sample %+v", s)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := Siege(context.Background(), SiegeConfig{Target: pingURL}, Requests(sizes, 3), func(s Sample) {
		list = append(list, Request{s.Size, s.Rep})
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plan, list) || !reflect.DeepEqual(plan, Requests(sizes, 3)) {
		t.Errorf("SiegePlan sent %v, Siege %v", plan, list)
	}
}

func TestParseMPing(t *testing.T) {
	tests := []struct {
		body string
		want MPing
		err  string
	}{
		{`{"length": 4, "code": 200, "retries": 0, "duration": 1.1897550000000001}`, MPing{1.1897550000000001, 4, 200, 0}, ""},
		{`{"length": 0, "code": 503, "retries": 100, "duration": 110.917285}`, MPing{110.917285, 0, 503, 100}, ""},
		{`{"duration":2,"length":5,"code":200,"retries":1,"extra":[1]}`, MPing{2, 5, 200, 1}, ""},
		{`{"length": 4.0, "code": 2e2, "retries": 0, "duration": 1e-05}`, MPing{1e-05, 4, 200, 0}, ""},
		{`{"length": 4, "code": 200, "retries": 0}`, MPing{}, `no "duration"`},
		{`{"length": 4, "retries": 0, "duration": 1}`, MPing{}, `no "code"`},
		{`{"code": 200, "retries": 0, "duration": 1}`, MPing{}, `no "length"`},
		{`{"length": 4, "code": 200, "duration": 1}`, MPing{}, `no "retries"`},
		{`{"length": -1, "code": 200, "retries": 0, "duration": 1}`, MPing{}, `"length" is -1`},
		{`{"length": 4.5, "code": 200, "retries": 0, "duration": 1}`, MPing{}, `"length" is 4.5`},
		{`{"length": 1e300, "code": 200, "retries": 0, "duration": 1}`, MPing{}, `"length" is 1e300`},
		{`{"length": 4, "code": 0, "retries": 0, "duration": 1}`, MPing{}, `"code" is 0`},
		{`{"length": 4, "code": 1000, "retries": 0, "duration": 1}`, MPing{}, `"code" is 1000`},
		{`{"length": 4, "code": 200, "retries": -2, "duration": 1}`, MPing{}, `"retries" is -2`},
		{`{"length": 4, "code": 200, "retries": 0, "duration": -1}`, MPing{}, `"duration" is -1`},
		{`{"length": 4, "code": 200, "retries": 0, "duration": 1e999}`, MPing{}, `"duration" is 1e999`},
		{`{"length": 4, "code": 200, "retries": 0, "duration": "x"}`, MPing{}, `not JSON`},
		{`[]`, MPing{}, `not JSON`},
		{`null`, MPing{}, `no "length"`},
		{`404 page not found`, MPing{}, `not JSON`},
		{``, MPing{}, `not JSON`},
	}
	for _, tt := range tests {
		got, err := ParseMPing([]byte(tt.body))
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseMPing(%s) = %+v, %v; want %+v", tt.body, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseMPing(%s) = %+v, %v; want a one-line error with %q", tt.body, got, err, tt.err)
		}
	}
}

// TestSiegeLengths: a ping reporting code 200 with a body that is no whole
// pong body for the size makes an error sample, not a good message; the
// lengths the pongs answer below 4 bytes are good.
func TestSiegeLengths(t *testing.T) {
	fake := serveOn(t, func(ctx *fasthttp.RequestCtx) {
		arg, _ := bytes.CutPrefix(ctx.Path(), []byte("/mping/"))
		n, _ := strconv.Atoi(string(arg))
		length := map[int]int{0: 4, 1: 4, 2: 3, 3: 3, 5: 4, 6: 7, 8: 8}[n]
		fmt.Fprintf(ctx, `{"length": %d, "code": 200, "retries": 0, "duration": 0.5}`, length)
	})
	var samples []Sample
	if err := Siege(context.Background(), SiegeConfig{Target: fake}, Requests([]int{0, 1, 2, 3, 5, 6, 8}, 1), func(s Sample) {
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

func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, NewPongHandler(100)) }()

	url := "http://" + ln.Addr().String() + "/pong/4"
	resp, body := get(t, "GET", url)
	if resp.StatusCode != 200 || string(body) != "pong" {
		t.Fatalf("served %d %q", resp.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel = %v, want nil", err)
		}
	case <-time.After(ShutdownGrace + 2*time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := (&http.Client{Timeout: time.Second}).Get(url); err == nil {
		t.Error("still serving after shutdown")
	}

	// A listener that fails is reported.
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	ln2.Close()
	if err := Serve(context.Background(), ln2, NewPongHandler(1)); err == nil {
		t.Error("Serve on a closed listener returned nil")
	}
}
