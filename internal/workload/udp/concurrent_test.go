package udp

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

// TestConcurrentTests runs 4 clients at once against one listener with
// Tests 4, each at its own rate so that a datagram counted in the wrong
// test shows; a 5th is told busy while they run.
func TestConcurrentTests(t *testing.T) {
	const n = 4
	for _, tc := range []struct {
		workload string
		run      func(addr string, i int) (received, lost, sent, ooo int64, bps float64, err error)
		rate     func(i int) float64 // bits/s of client i
	}{
		{WorkloadJitter, func(addr string, i int) (int64, int64, int64, int64, float64, error) {
			r, err := RunJitter(context.Background(), JitterConfig{Addr: addr, Rate: int64(i+1) * 2_000_000, Size: 1000,
				Duration: 1500 * time.Millisecond, Interval: 250 * time.Millisecond})
			return r.Total.Packets, r.Total.Lost, r.Total.Sent, r.Total.OutOfOrder, r.Total.BPS, err
		}, func(i int) float64 { return float64(i+1) * 2_000_000 }},
		{WorkloadDatagram, func(addr string, i int) (int64, int64, int64, int64, float64, error) {
			r, err := RunDatagram(context.Background(), DatagramConfig{Addr: addr, Rate: int64(i+1) * 2_000_000, Size: 1000,
				Duration: 1500 * time.Millisecond, Interval: 250 * time.Millisecond})
			return r.Total.Received, r.Total.Missing, r.Total.Sent, r.Total.OutOfOrder, r.Total.MBPerS * 8e6, err
		}, func(i int) float64 { return float64(i+1) * 2_000_000 }},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			addr, s := serve(t, &Server{Grace: 100 * time.Millisecond, IdleTimeout: 2 * time.Second, Sessions: n})
			type outcome struct {
				received, lost, sent, ooo int64
				bps                       float64
				err                       error
			}
			out := make([]outcome, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					o := &out[i]
					o.received, o.lost, o.sent, o.ooo, o.bps, o.err = tc.run(addr, i)
				})
			}
			for start := time.Now(); s.running() < n; time.Sleep(10 * time.Millisecond) {
				if time.Since(start) > 2*time.Second {
					t.Fatalf("%d of %d tests running", s.running(), n)
				}
			}
			_, err := RunDatagram(context.Background(), DatagramConfig{Addr: addr, Count: 10, Size: 100})
			if err == nil || !strings.Contains(err.Error(), "busy") {
				t.Errorf("5th test: %v, want busy", err)
			}
			wg.Wait()
			for i, o := range out {
				if o.err != nil {
					t.Errorf("client %d: %v", i, o.err)
					continue
				}
				if o.sent == 0 || o.received != o.sent || o.lost != 0 || o.ooo != 0 {
					t.Errorf("client %d: received %d of %d, lost %d, out of order %d", i, o.received, o.sent, o.lost, o.ooo)
				}
				// Its own rate: another test's datagrams would show here.
				if want := tc.rate(i); o.bps > 1.1*want || o.bps < 0.5*want {
					t.Errorf("client %d: %.2f Mbit/s, want about %.0f", i, o.bps/1e6, want/1e6)
				}
			}
		})
	}
}

// TestInvalidChargedToSource: with several tests running, a corrupt
// datagram counts in the test whose datagrams come from its source, and
// nowhere else.
func TestInvalidChargedToSource(t *testing.T) {
	addr, s := serve(t, &Server{Grace: 50 * time.Millisecond, IdleTimeout: 2 * time.Second, Sessions: 2})
	type client struct {
		rc *rawControl
		u  net.Conn
		id uint32
	}
	var cs []client
	for range 2 {
		rc := dialControl(t, addr)
		resp := rc.do(t, `{"op":"start","workload":"datagram","size":100}`)
		if resp.Error != "" {
			t.Fatal(resp.Error)
		}
		u, err := net.Dial("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer u.Close()
		cs = append(cs, client{rc, u, resp.TestID})
	}
	b := make([]byte, 100)
	for _, c := range cs {
		for i := range 5 {
			Header{TestID: c.id, Seq: uint64(i)}.Put(b)
			_, _ = c.u.Write(b)
		}
	}
	// Corrupt datagrams once each source is known: 3 from client 0.
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		known := len(s.bySrc)
		s.mu.Unlock()
		if known == 2 {
			break
		}
		if time.Since(start) > 2*time.Second {
			t.Fatalf("%d sources known", known)
		}
	}
	for range 3 {
		_, _ = cs[0].u.Write([]byte("junk"))
	}
	for i, c := range cs {
		resp := c.rc.do(t, `{"op":"stop","sent":5}`)
		if resp.Report == nil {
			t.Fatalf("client %d: %+v", i, resp)
		}
		want := int64(0)
		if i == 0 {
			want = 3
		}
		if r := resp.Report; r.Invalid != want || r.Total.Packets != 5 || r.Total.Lost != 0 {
			t.Errorf("client %d: invalid %d (want %d), %d packets, %d lost", i, r.Invalid, want, r.Total.Packets, r.Total.Lost)
		}
	}
	if s.running() != 0 || s.invalid.Load() != 0 {
		t.Errorf("%d tests running, %d invalid outside of them", s.running(), s.invalid.Load())
	}
}

func TestTestsBounds(t *testing.T) {
	for _, n := range []int{-1, serverkit.MaxTests + 1} {
		ln, pc, err := serverkit.ListenPair("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		err = (&Server{Sessions: n}).Serve(context.Background(), pc, ln)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--tests %d", n)) {
			t.Errorf("Tests %d: %v", n, err)
		}
	}
}
