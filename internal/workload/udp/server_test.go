package udp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

// startServer runs a listener on a free loopback port until the test ends.
func startServer(t *testing.T, idle ...time.Duration) (string, *Server) {
	t.Helper()
	s := &Server{Grace: 100 * time.Millisecond, IdleTimeout: 2 * time.Second}
	if len(idle) > 0 {
		s.IdleTimeout = idle[0]
	}
	return serve(t, s)
}

// serve runs s on a free loopback port until the test ends.
func serve(t *testing.T, s *Server) (string, *Server) {
	t.Helper()
	ln, pc, err := serverkit.ListenPair("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	s.Logf = func(f string, a ...any) { mu.Lock(); defer mu.Unlock(); t.Logf("server: "+f, a...) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, pc, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), s
}

func TestJitterLoopback(t *testing.T) {
	addr, _ := startServer(t)
	const rate = 10_000_000
	r, err := RunJitter(context.Background(), JitterConfig{Addr: addr, Rate: rate, Size: 1470, Duration: time.Second, Interval: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tot := r.Total
	t.Logf("total: %.2f Mbit/s, %d/%d packets, lost %d, ooo %d, jitter %.4f ms, %.3f s, %d intervals",
		tot.BPS/1e6, tot.Packets, tot.Sent, tot.Lost, tot.OutOfOrder, tot.JitterMS, tot.EndS, len(r.Intervals))
	// Never above the target; below it only by what stalls longer than the
	// pacer's burst cost a busy machine (the exact pacing is unit-tested in
	// udpseq), so the lower bound catches gross faults only.
	if tot.BPS > 1.05*rate || tot.BPS < 0.5*rate {
		t.Errorf("achieved %.0f bit/s, want at most 5%% above and at least half of %d", tot.BPS, rate)
	}
	if tot.Lost != 0 || tot.Packets != tot.Sent || tot.Invalid != 0 {
		t.Errorf("lost %d, received %d of %d, invalid %d", tot.Lost, tot.Packets, tot.Sent, tot.Invalid)
	}
	if tot.Workload != "jitter" || !tot.Total || tot.Size != 1470 || tot.TargetBPS != rate || tot.JitterMS < 0 || tot.JitterMS > 50 {
		t.Errorf("total = %+v", tot)
	}
	if len(r.Intervals) < 4 || len(r.Intervals) > 5 {
		t.Errorf("%d intervals of 250 ms over 1 s", len(r.Intervals))
	}
	var pk int64
	for _, iv := range r.Intervals {
		pk += iv.Packets
		if iv.Workload != "jitter" || iv.Total {
			t.Errorf("interval = %+v", iv)
		}
	}
	if pk != tot.Packets {
		t.Errorf("intervals hold %d packets, total %d", pk, tot.Packets)
	}
	b, _ := json.Marshal(tot)
	if !strings.Contains(string(b), `"workload":"jitter"`) || !strings.Contains(string(b), `"jitter_ms":`) {
		t.Errorf("JSON %s", b)
	}
}

func TestDatagramLoopback(t *testing.T) {
	addr, _ := startServer(t)
	tests := []struct {
		name string
		cfg  DatagramConfig
	}{
		{"count, as fast as possible", DatagramConfig{Count: 20000, Size: 1468, Interval: 100 * time.Millisecond}},
		{"count, auto size", DatagramConfig{Count: 2000}},
		{"duration and rate", DatagramConfig{Duration: 300 * time.Millisecond, Rate: 50_000_000, Size: 1000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			c.Addr = addr
			r, err := RunDatagram(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			tot := r.Total
			t.Logf("total: %.1f MB/s, %.0f packets/s, received %d missing %d of %d, success %.4f, ooo %d, avg offset %.1f, %d-byte packets",
				tot.MBPerS, tot.PacketsPerS, tot.Received, tot.Missing, tot.Sent, tot.SuccessRate, tot.OutOfOrder, tot.AvgOffset, tot.PacketSize)
			if c.Count > 0 && (tot.Sent != c.Count || tot.Received+tot.Missing != c.Count) {
				t.Errorf("sent %d, received %d + missing %d, want %d", tot.Sent, tot.Received, tot.Missing, c.Count)
			}
			if c.Count == 0 && tot.Received+tot.Missing != tot.Sent {
				t.Errorf("received %d + missing %d != sent %d", tot.Received, tot.Missing, tot.Sent)
			}
			if want := float64(tot.Received) / float64(tot.Received+tot.Missing); tot.SuccessRate != want {
				t.Errorf("success rate %v, want %v", tot.SuccessRate, want)
			}
			wantSize := c.Size
			if wantSize == 0 {
				wantSize = DefaultPacketSize(workload.LocalMTU(&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}))
			}
			if tot.PacketSize != wantSize || tot.Bytes != tot.Received*int64(wantSize) {
				t.Errorf("packet size %d, bytes %d; want %d-byte packets", tot.PacketSize, tot.Bytes, wantSize)
			}
			var rec, miss int64
			for _, iv := range r.Intervals {
				rec += iv.Received
				miss += iv.Missing
				if iv.Missing < 0 || iv.Workload != "datagram" {
					t.Errorf("interval %+v", iv)
				}
			}
			if len(r.Intervals) > 0 && (rec != tot.Received || miss != tot.Missing) {
				t.Errorf("intervals: %d received, %d missing; total %d, %d", rec, miss, tot.Received, tot.Missing)
			}
			if c.Rate > 0 {
				if bps := tot.MBPerS * 8e6; bps > 1.1*float64(c.Rate) {
					t.Errorf("%.0f bit/s above the %d limit", bps, c.Rate)
				}
			}
		})
	}
}

// control opens a raw control connection.
type rawControl struct {
	c  net.Conn
	sc *bufio.Scanner
}

func dialControl(t *testing.T, addr string) *rawControl {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawControl{c, bufio.NewScanner(c)}
}

func (r *rawControl) do(t *testing.T, line string) response {
	t.Helper()
	_ = r.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintln(r.c, line); err != nil {
		t.Fatal(err)
	}
	if !r.sc.Scan() {
		t.Fatalf("no answer to %s: %v", line, r.sc.Err())
	}
	var resp response
	if err := json.Unmarshal(r.sc.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestDeadClientLeavesServerServing(t *testing.T) {
	addr, _ := startServer(t)
	// A client starts a test, sends some datagrams and vanishes.
	rc := dialControl(t, addr)
	resp := rc.do(t, `{"op":"start","workload":"datagram","size":100}`)
	if resp.Error != "" || resp.TestID == 0 {
		t.Fatalf("start: %+v", resp)
	}
	u, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	b := make([]byte, 100)
	for i := range 10 {
		Header{TestID: resp.TestID, Seq: uint64(i)}.Put(b)
		u.Write(b)
	}
	// While it runs, another client is turned away.
	if other := dialControl(t, addr).do(t, `{"op":"start","workload":"jitter"}`); !strings.Contains(other.Error, "busy") {
		t.Errorf("second start: %+v", other)
	}
	rc.c.Close()
	// The next test runs (the dead client's test ends when its connection does).
	var r DatagramResult
	deadline := time.Now().Add(3 * time.Second)
	for {
		r, err = RunDatagram(context.Background(), DatagramConfig{Addr: addr, Count: 500, Size: 200, Rate: 10_000_000})
		if err == nil || !strings.Contains(err.Error(), "busy") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if r.Total.Received+r.Total.Missing != 500 || r.Total.Received == 0 {
		t.Errorf("next test: %+v", r.Total)
	}
}

func TestSilentClientTimesOut(t *testing.T) {
	addr, s := startServer(t, 300*time.Millisecond)
	rc := dialControl(t, addr)
	if resp := rc.do(t, `{"op":"start","workload":"jitter"}`); resp.Error != "" {
		t.Fatal(resp.Error)
	}
	// The client says nothing more and keeps its connection open.
	start := time.Now()
	for s.running() != 0 {
		if time.Since(start) > 5*time.Second {
			t.Fatal("a silent client's test never ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := RunJitter(context.Background(), JitterConfig{Addr: addr, Rate: 1_000_000, Size: 100, Duration: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
}

func TestBadDatagramsIgnored(t *testing.T) {
	addr, s := startServer(t)
	u, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	junk := [][]byte{
		{}, {1}, make([]byte, descriptors.UDPHeaderSize-1), make([]byte, 100), // short, wrong magic (zeros)
		[]byte(strings.Repeat("x", 1000)),
	}
	good := make([]byte, 64)
	Header{TestID: 12345, Seq: 1}.Put(good) // well-formed, no such test
	send := func() {
		for _, j := range junk {
			u.Write(j)
		}
		u.Write(good)
	}
	send()
	// During a test too: a Dial hook sends junk from the test's own socket.
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, a)
		if err == nil && network == "udp" {
			c.Write([]byte("garbage"))
			c.Write(make([]byte, 1470))
		}
		return c, err
	}
	r, err := RunJitter(context.Background(), JitterConfig{Addr: addr, Rate: 5_000_000, Size: 500, Duration: 200 * time.Millisecond, Interval: 100 * time.Millisecond, Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	send()
	if r.Total.Lost != 0 || r.Total.Packets != r.Total.Sent || r.Total.Packets == 0 {
		t.Errorf("junk disturbed the test: %+v", r.Total)
	}
	// The junk sent during the test may land just before or after it starts.
	deadline := time.Now().Add(2 * time.Second)
	for {
		inv, stray := s.invalid.Load(), s.stray.Load()
		if inv+r.Total.Invalid == 2*int64(len(junk))+2 && stray == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ignored: %d invalid (+%d in the test), %d stray; want %d and 2", inv, r.Total.Invalid, stray, 2*len(junk)+2)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Bad control requests are answered with an error, not a crash.
	for _, line := range []string{`nonsense`, `{"op":"dance"}`, `{"op":"stop"}`, `{"op":"start","interval_ns":5}`} {
		if resp := dialControl(t, addr).do(t, line); resp.Error == "" {
			t.Errorf("%s: no error", line)
		}
	}
}

func TestInterruptedReturnsPartial(t *testing.T) {
	addr, _ := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r, err := RunJitter(ctx, JitterConfig{Addr: addr, Rate: 1_000_000, Size: 1000, Duration: 10 * time.Second, Interval: 100 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if r.Total.Packets == 0 || r.Total.EndS > 1 || r.Total.Lost != 0 {
		t.Errorf("partial result: %+v", r.Total)
	}
}

func TestUnreachableServerFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = RunDatagram(context.Background(), DatagramConfig{Addr: addr, Count: 10})
	if err == nil || !strings.Contains(err.Error(), "control connection") {
		t.Errorf("err = %v", err)
	}
}

// running is the number of tests running.
func (s *Server) running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.active)
}
