package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

// TestConcurrentTests runs 8 clients at once against one server with
// --tests 8, each at its own rate so that a byte or datagram counted in the
// wrong test shows; a 9th is told busy while they run.
func TestConcurrentTests(t *testing.T) {
	const n = 8
	for _, tc := range []struct {
		proto string
		rate  func(i int) int64 // bits/s of client i
	}{
		{"tcp", func(i int) int64 { return int64(i+1) * 20_000_000 }},
		{"udp", func(i int) int64 { return int64(i+1) * 1_000_000 }},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			addr := startServer(t, n)
			var running sync.WaitGroup
			running.Add(n)
			type outcome struct {
				res Result
				c   *collect
				err error
			}
			out := make([]outcome, n)
			var done sync.WaitGroup
			for i := range n {
				c := &collect{}
				out[i].c = c
				var once sync.Once
				emit := func(iv Interval) {
					c.emit(iv)
					if iv.Side == SideSender {
						once.Do(running.Done)
					}
				}
				cfg := Config{Addr: addr, Protocol: tc.proto, Duration: 1500 * time.Millisecond, Interval: 250 * time.Millisecond, Rate: tc.rate(i)}
				done.Go(func() {
					out[i].res, out[i].err = Run(context.Background(), cfg, emit)
					once.Do(running.Done) // failed before its first interval
				})
			}
			running.Wait()
			_, err := Run(context.Background(), Config{Addr: addr, Protocol: tc.proto, Duration: time.Second}, nil)
			if !errors.Is(err, ErrBusy) {
				t.Errorf("9th test: %v, want ErrBusy", err)
			}
			done.Wait()
			for i, o := range out {
				t.Run(fmt.Sprint("client ", i), func(t *testing.T) {
					if o.err != nil {
						t.Fatal(o.err)
					}
					res := o.res
					snd, rcv := o.c.sums(SideSender), o.c.sums(SideReceiver)
					if s, r := total(snd), total(rcv); s != r || s == 0 {
						t.Errorf("sender sent %d bytes over the intervals, receiver got %d", s, r)
					}
					if ratio := float64(res.ReceiverBytes) / float64(res.SenderBytes); ratio < 0.8 || ratio > 1.25 {
						t.Errorf("measured receiver/sender bytes = %.3f", ratio)
					}
					// Its own rate: another test's traffic would show here.
					want := float64(tc.rate(i))
					if got := res.ReceiverBitsPerSecond; got < 0.5*want || got > 1.15*want {
						t.Errorf("receiver %.1f Mbit/s, want about %.0f", got/1e6, want/1e6)
					}
					if tc.proto == "udp" {
						var sent, got int64
						for _, iv := range snd {
							sent += iv.Packets
						}
						for _, iv := range rcv {
							got += iv.Packets
						}
						if sent == 0 || sent != got || res.Packets != got || res.Lost != 0 || res.OutOfOrder != 0 {
							t.Errorf("sent %d datagrams, received %d (result %d), lost %d, out of order %d",
								sent, got, res.Packets, res.Lost, res.OutOfOrder)
						}
					}
				})
			}
		})
	}
}

// Once the concurrent tests end, their slots are free again: as many run
// again at once.
func TestConcurrentSlotsFreed(t *testing.T) {
	const n = 3
	addr := startServer(t, n)
	for round := range 2 {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			proto := []string{"tcp", "udp"}[i%2]
			wg.Go(func() {
				_, errs[i] = Run(context.Background(), Config{Addr: addr, Protocol: proto, Duration: 300 * time.Millisecond}, nil)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, client %d: %v", round, i, err)
			}
		}
	}
}

func TestListenTestsBounds(t *testing.T) {
	for _, n := range []int{0, -1, serverkit.MaxTests + 1} {
		if s, err := Listen("127.0.0.1:0", n, nil); err == nil {
			s.ln.Close()
			s.udp.Close()
			t.Errorf("Listen with %d tests: no error", n)
		}
	}
}

// A second running test with the same test id (a reused cookie) is
// refused: its data would be taken for the first one's.
func TestTestIDInUse(t *testing.T) {
	addr := startServer(t, 2)
	var cookie [cookieLen]byte
	cookie[0] = 9
	req := testMessage(Config{Protocol: "udp", Duration: time.Second}, cookie)
	c1, _, r := rawControl(t, addr, req)
	defer c1.Close()
	if r.Type != "accept" {
		t.Fatalf("first: %+v", r)
	}
	cookie[cookieLen-1] = 1 // same id (first 4 bytes), other cookie
	c2, _, r := rawControl(t, addr, testMessage(Config{Protocol: "tcp", Duration: time.Second}, cookie))
	defer c2.Close()
	if r.Type != "error" || r.Busy || !strings.Contains(r.Error, "test id") {
		t.Fatalf("second with the same id: %+v", r)
	}
	// The slot it took is free: a test with another id runs.
	if _, err := Run(context.Background(), Config{Addr: addr, Duration: 200 * time.Millisecond}, nil); err != nil {
		t.Fatal(err)
	}
}
