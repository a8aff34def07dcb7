package pingpong

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
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
				if !s.OK() || s.Code != 200 || s.Length != s.Size || s.Error != "" || s.Retries != 0 {
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

func TestSiegeBadTarget(t *testing.T) {
	if err := Siege(context.Background(), SiegeConfig{Target: "not a url"}, Requests([]int{1}, 1), func(Sample) {}); err == nil {
		t.Error("bad target accepted")
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
