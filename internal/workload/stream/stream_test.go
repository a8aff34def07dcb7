package stream

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// startServer serves on a free loopback port until the test ends, up to
// tests[0] tests at once (default 1).
func startServer(t *testing.T, tests ...int) string {
	t.Helper()
	return startServing(t, tests...).Addr().String()
}

// startServing starts a server as startServer does and returns it.
func startServing(t *testing.T, tests ...int) *Server {
	t.Helper()
	n := 1
	if len(tests) > 0 {
		n = tests[0]
	}
	s, err := Listen("127.0.0.1:0", n, testLog{t})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("Serve did not return after cancel")
		}
	})
	return s
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) { l.t.Logf("%s", p); return len(p), nil }

// collect gathers emitted intervals; safe for concurrent use.
type collect struct {
	mu  sync.Mutex
	ivs []Interval
}

func (c *collect) emit(iv Interval) { c.mu.Lock(); c.ivs = append(c.ivs, iv); c.mu.Unlock() }

func (c *collect) sums(side string) []Interval {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Interval
	for _, iv := range c.ivs {
		if iv.Side == side && iv.Stream == StreamSum {
			out = append(out, iv)
		}
	}
	return out
}

func total(ivs []Interval) (b int64) {
	for _, iv := range ivs {
		b += iv.Bytes
	}
	return b
}

func TestTCP(t *testing.T) {
	addr := startServer(t)
	tests := []struct {
		name          string
		parallel      int
		dur, omit     time.Duration
		interval      time.Duration
		bins, omitted int
		copy          bool // --copy: write(2), not sendfile(2)
		send          string
	}{
		{"1 stream", 1, time.Second, 0, 500 * time.Millisecond, 2, 0, false, "sendfile"},
		{"4 streams with warm-up", 4, time.Second, 500 * time.Millisecond, 500 * time.Millisecond, 3, 1, false, "sendfile"},
		{"1 stream copied", 1, time.Second, 0, 500 * time.Millisecond, 2, 0, true, "write"},
		{"4 streams copied", 4, time.Second, 0, 500 * time.Millisecond, 2, 0, true, "write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c collect
			start := time.Now()
			res, err := Run(context.Background(), Config{Addr: addr, Duration: tt.dur, Omit: tt.omit, Interval: tt.interval, Parallel: tt.parallel, Copy: tt.copy}, c.emit)
			if err != nil {
				t.Fatal(err)
			}
			if res.Send != tt.send || res.IO != "loop" || (res.SendFile != "") != (tt.send == "sendfile") {
				t.Errorf("sent with %q from %q (io %q), want %q (loop)", res.Send, res.SendFile, res.IO, tt.send)
			}
			if el := time.Since(start); el > tt.dur+tt.omit+2*time.Second {
				t.Errorf("took %s", el)
			}
			t.Logf("%+v", res)
			snd, rcv := c.sums(SideSender), c.sums(SideReceiver)
			if len(snd) != tt.bins || len(rcv) != tt.bins {
				t.Fatalf("%d sender and %d receiver intervals, want %d", len(snd), len(rcv), tt.bins)
			}
			for k := range snd {
				if snd[k].Omitted != (k < tt.omitted) || rcv[k].Omitted != (k < tt.omitted) {
					t.Errorf("interval %d: omitted %v/%v", k, snd[k].Omitted, rcv[k].Omitted)
				}
			}
			// Every byte written is read: the totals over all intervals agree exactly.
			if s, r := total(snd), total(rcv); s != r || s == 0 {
				t.Errorf("sender sent %d bytes, receiver got %d", s, r)
			}
			if res.SenderBytes <= 0 || res.ReceiverBytes <= 0 || res.Streams != tt.parallel || res.Workload != "stream" || res.Protocol != "tcp" {
				t.Errorf("result %+v", res)
			}
			if ratio := float64(res.ReceiverBytes) / float64(res.SenderBytes); ratio < 0.8 || ratio > 1.25 {
				t.Errorf("measured receiver/sender bytes = %.3f", ratio)
			}
			if math.Abs(res.Duration-tt.dur.Seconds()) > 0.1 {
				t.Errorf("duration %.3f s, want %s", res.Duration, tt.dur)
			}
			if tt.parallel > 1 {
				per := map[int]int64{}
				c.mu.Lock()
				for _, iv := range c.ivs {
					if iv.Side == SideReceiver && iv.Stream >= 0 {
						per[iv.Stream] += iv.Bytes
					}
				}
				c.mu.Unlock()
				if len(per) != tt.parallel {
					t.Errorf("receiver intervals for %d streams, want %d", len(per), tt.parallel)
				}
			}
		})
	}
}

func TestUDP(t *testing.T) {
	addr := startServer(t)
	const rate = 10_000_000
	// The pacer must never send faster than asked. It may fall behind only
	// when the machine starves it of CPU (a loaded 2-core CI machine did,
	// once): a pacer that is slow by design falls behind every attempt.
	var res Result
	var c collect
	for attempt := 1; ; attempt++ {
		c = collect{}
		var err error
		res, err = Run(context.Background(), Config{Addr: addr, Protocol: "udp", Duration: time.Second, Rate: rate}, c.emit)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("attempt %d: %+v", attempt, res)
		if res.SenderBitsPerSecond > rate*1.1 || res.ReceiverBitsPerSecond > rate*1.1 {
			t.Fatalf("sender %.0f, receiver %.0f bit/s: faster than %d + 10%%", res.SenderBitsPerSecond, res.ReceiverBitsPerSecond, rate)
		}
		if res.SenderBitsPerSecond >= rate*0.9 && res.ReceiverBitsPerSecond >= rate*0.9 {
			break
		}
		if attempt == 3 {
			t.Fatalf("sender %.0f, receiver %.0f bit/s in 3 attempts, want %d ± 10%%", res.SenderBitsPerSecond, res.ReceiverBitsPerSecond, rate)
		}
	}
	if res.Lost != 0 || res.LossPercent != 0 || res.OutOfOrder != 0 {
		t.Errorf("lost %d (%.2f%%), out of order %d on loopback", res.Lost, res.LossPercent, res.OutOfOrder)
	}
	var sent, got int64
	for _, iv := range c.sums(SideSender) {
		sent += iv.Packets
	}
	for _, iv := range c.sums(SideReceiver) {
		got += iv.Packets
	}
	if sent == 0 || sent != got || res.Packets != got {
		t.Errorf("sent %d datagrams, received %d, result packets %d", sent, got, res.Packets)
	}
}

// A rate the path cannot carry is measured, not hung on.
func TestUDPOverload(t *testing.T) {
	addr := startServer(t)
	start := time.Now()
	res, err := Run(context.Background(), Config{Addr: addr, Protocol: "udp", Duration: time.Second, Rate: descriptors.StreamUnlimitedRate, Parallel: 2, Length: 8000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %s", el)
	}
	t.Logf("%+v", res)
	if res.SenderBytes == 0 || res.Packets == 0 || res.Lost < 0 || res.LossPercent < 0 || res.LossPercent > 100 {
		t.Errorf("result %+v", res)
	}
}

func TestInterrupted(t *testing.T) {
	addr := startServer(t)
	for _, proto := range []string{"tcp", "udp"} {
		t.Run(proto, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
			defer cancel()
			start := time.Now()
			res, err := Run(ctx, Config{Addr: addr, Protocol: proto, Duration: 10 * time.Second, Interval: 200 * time.Millisecond, Rate: 50_000_000}, nil)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the context's", err)
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("took %s", el)
			}
			if res.SenderBytes == 0 || res.ReceiverBytes == 0 || res.Duration > 1 {
				t.Errorf("result %+v", res)
			}
		})
	}
}

// rawControl speaks the control protocol by hand.
func rawControl(t *testing.T, addr string, m message) (net.Conn, *json.Decoder, message) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	dec := json.NewDecoder(c)
	if err := json.NewEncoder(c).Encode(m); err != nil {
		t.Fatal(err)
	}
	var r message
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	return c, dec, r
}

func TestServerSurvives(t *testing.T) {
	addr := startServer(t)
	var cookie [cookieLen]byte
	cookie[0] = 7
	long := testMessage(Config{Protocol: "tcp", Duration: time.Minute, Interval: time.Second, Parallel: 2, Length: DefaultTCPLength}, cookie)
	tests := []struct {
		name string
		bad  func(t *testing.T)
	}{
		{"garbage", func(t *testing.T) {
			for _, junk := range []string{"xyz\n", "{not json", "{\"type\":\"test\",\"parallel\":-5}\n", "{\"type\":\"test\",\"duration_ns\":1e9,\"cookie\":\"zz\"}\n", "\x00\x01", "D short"} {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = c.Write([]byte(junk))
				_ = c.(*net.TCPConn).CloseWrite()
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, _ = io.ReadAll(c)
				c.Close()
			}
		}},
		{"bad request is answered", func(t *testing.T) {
			c, _, r := rawControl(t, addr, message{Type: "test", Protocol: "udp", DurationNS: int64(time.Second), Length: 70000})
			defer c.Close()
			if r.Type != "error" || !strings.Contains(r.Error, "--length 70000") {
				t.Fatalf("reply %+v", r)
			}
		}},
		{"client dies after the request", func(t *testing.T) {
			c, _, r := rawControl(t, addr, long)
			if r.Type != "accept" {
				t.Fatalf("reply %+v", r)
			}
			c.Close()
		}},
		{"client dies mid-test", func(t *testing.T) {
			c, dec, r := rawControl(t, addr, long)
			if r.Type != "accept" {
				t.Fatalf("reply %+v", r)
			}
			var data []net.Conn
			for i := range 2 {
				d, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				h := make([]byte, dataHeaderLen)
				h[0] = dataMagic
				copy(h[1:], cookie[:])
				binary.BigEndian.PutUint32(h[1+cookieLen:], uint32(i))
				_, _ = d.Write(h)
				data = append(data, d)
			}
			_ = json.NewEncoder(c).Encode(message{Type: "start"})
			if err := dec.Decode(&r); err != nil || r.Type != "started" {
				t.Fatalf("reply %+v, %v", r, err)
			}
			buf := make([]byte, 1<<20)
			for _, d := range data {
				_, _ = d.Write(buf)
			}
			// Gone without a word: data connections reset, control closed.
			for _, d := range data {
				_ = d.(*net.TCPConn).SetLinger(0)
				d.Close()
			}
			c.Close()
		}},
		{"client dies mid-test, data left open", func(t *testing.T) {
			c, dec, r := rawControl(t, addr, long)
			if r.Type != "accept" {
				t.Fatalf("reply %+v", r)
			}
			var data []net.Conn
			for i := range 2 {
				d, _ := net.Dial("tcp", addr)
				h := make([]byte, dataHeaderLen)
				h[0] = dataMagic
				copy(h[1:], cookie[:])
				binary.BigEndian.PutUint32(h[1+cookieLen:], uint32(i))
				_, _ = d.Write(h)
				data = append(data, d)
			}
			_ = json.NewEncoder(c).Encode(message{Type: "start"})
			_ = dec.Decode(&r)
			c.Close() // control gone; the data connections stay open until the test ends
			t.Cleanup(func() {
				for _, d := range data {
					d.Close()
				}
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.bad(t)
			// The server closes that test and serves the next one.
			var res Result
			var err error
			for try := 0; try < 20; try++ {
				res, err = Run(context.Background(), Config{Addr: addr, Duration: 300 * time.Millisecond, Parallel: 2}, nil)
				if !errors.Is(err, ErrBusy) {
					break
				}
				time.Sleep(50 * time.Millisecond) // the server is still closing the dead test
			}
			if err != nil {
				t.Fatalf("next test: %v", err)
			}
			if res.ReceiverBytes == 0 {
				t.Fatalf("next test: %+v", res)
			}
		})
	}
}

func TestBusy(t *testing.T) {
	addr := startServer(t)
	started := make(chan struct{})
	var once sync.Once
	first := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{Addr: addr, Duration: 1500 * time.Millisecond, Interval: 100 * time.Millisecond, Rate: 100_000_000},
			func(Interval) { once.Do(func() { close(started) }) })
		first <- err
	}()
	select {
	case <-started:
	case err := <-first:
		t.Fatalf("first test: %v", err)
	}
	_, err := Run(context.Background(), Config{Addr: addr, Duration: time.Second}, nil)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("second test: %v, want ErrBusy", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first test: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	if _, err := Run(context.Background(), Config{Addr: addr, Duration: time.Second}, nil); err == nil {
		t.Fatal("Run against a closed port succeeded")
	}
	if _, err := Run(context.Background(), Config{Addr: addr, Duration: -time.Second}, nil); err == nil || !strings.Contains(err.Error(), "--time") {
		t.Fatalf("Run with a negative duration: %v", err)
	}
}

// A client's next test right after the last one is never refused as busy.
func TestBackToBack(t *testing.T) {
	addr := startServer(t)
	for i := range 3 {
		proto := []string{"tcp", "udp", "tcp"}[i]
		if _, err := Run(context.Background(), Config{Addr: addr, Protocol: proto, Duration: 200 * time.Millisecond}, nil); err != nil {
			t.Fatalf("test %d (%s): %v", i, proto, err)
		}
	}
}

// TestIdleServerSleeps: an idle server's threads sleep, its UDP reader
// included, and it still stops at once (startServer's cleanup): a reader
// that waited 50 ms at a time kept sysmon polling every 20 µs, a thousand
// wake-ups a second on the CPU that answers the tests.
func TestIdleServerSleeps(t *testing.T) {
	startServer(t)
	testutil.CheckIdle(t, 200*time.Millisecond, 50)
}

// TestOneStreamReaderLentAP: the raw reader of a one-stream test holds its
// P while it blocks, so the server lends it one for the test and takes it
// back after: with GOMAXPROCS 1, the rest of the server (and a second
// test) would otherwise wait for its yields.
func TestOneStreamReaderLentAP(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	srv := startServing(t)
	addr := srv.Addr().String()
	// Serve has begun when it has taken its base (1).
	if err := poll.Until(context.Background(), 5*time.Second, time.Millisecond, func() (bool, error) {
		return srv.procs.Base() != 0, nil
	}); err != nil {
		t.Fatalf("Serve never began: %v", err)
	}
	var most atomic.Int32
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
				if n := int32(runtime.GOMAXPROCS(0)); n > most.Load() {
					most.Store(n)
				}
			}
		}
	}()
	res, err := Run(context.Background(), Config{Addr: addr, Duration: 500 * time.Millisecond}, nil)
	close(done)
	if err != nil || res.ReceiverBitsPerSecond <= 0 {
		t.Fatalf("%v, %+v", err, res)
	}
	// The reader's release follows the answer: wait for it.
	released := poll.Until(context.Background(), 5*time.Second, time.Millisecond, func() (bool, error) {
		return runtime.GOMAXPROCS(0) == 1, nil
	})
	if got := runtime.GOMAXPROCS(0); most.Load() != 2 || released != nil {
		t.Errorf("GOMAXPROCS was at most %d during the test and %d after (%v); want 2 and 1", most.Load(), got, released)
	}
}
