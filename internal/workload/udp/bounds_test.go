package udp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// waitGoroutines waits until at most n goroutines run; it returns how many do.
func waitGoroutines(n int, within time.Duration) int {
	deadline := time.Now().Add(within)
	for {
		g := runtime.NumGoroutine()
		if g <= n || time.Now().After(deadline) {
			return g
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBadLinesLeakNothing: a leak found once. Each control connection sends a
// bad line followed by more lines (a reader goroutine blocked on handing
// them over was never freed, with its buffer): after many such connections
// the server holds no more goroutines or memory than before.
func TestBadLinesLeakNothing(t *testing.T) {
	addr, _ := startServer(t)
	payload := []byte("nonsense\n" + strings.Repeat(`{"op":"start","workload":"jitter"}`+"\n", 200) + strings.Repeat("x", 60<<10))
	// A first test, so that the server's own goroutines all run.
	if _, err := RunDatagram(context.Background(), DatagramConfig{Addr: addr, Count: 100, Size: 100, Rate: 10_000_000}); err != nil {
		t.Fatal(err)
	}
	g0 := waitGoroutines(0, 100*time.Millisecond)
	before := heapInuse()
	const conns = 1000
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write(payload)
		c.Close()
		// Every 100th, read the error; the server then closes the
		// connection. The closes above outrun the server's handling, so
		// this one may find all 64 control slots taken and be refused
		// (no answer): try again once they are free.
		if i%100 == 0 {
			line := ""
			for try := 0; try < 50 && !strings.Contains(line, "bad request"); try++ {
				time.Sleep(time.Duration(try) * 10 * time.Millisecond)
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_, _ = c.Write(payload)
				line, _ = bufio.NewReader(c).ReadString('\n')
				c.Close()
			}
			if !strings.Contains(line, "bad request") {
				t.Errorf("answer %q", line)
			}
		}
	}
	g := waitGoroutines(g0, 5*time.Second)
	after := heapInuse()
	t.Logf("%d connections with a bad line: goroutines %d -> %d, heap in use %.1f -> %.1f MB",
		conns, g0, g, float64(before)/1e6, float64(after)/1e6)
	if g > g0 {
		t.Errorf("%d goroutines left, %d before", g, g0)
	}
	if after > before+8<<20 {
		t.Errorf("heap in use grew from %d to %d bytes", before, after)
	}
	if _, err := RunDatagram(context.Background(), DatagramConfig{Addr: addr, Count: 100, Size: 100, Rate: 10_000_000}); err != nil {
		t.Fatal(err)
	}
}

// TestControlConnectionCap: a client beyond maxControlConns is told the
// listener is busy; when the others go, tests run again.
func TestControlConnectionCap(t *testing.T) {
	addr, _ := startServer(t)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range maxControlConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Once the server reads them all, the next client is told that the
	// listener is busy, not reset.
	var err error
	_ = poll.Until(context.Background(), 5*time.Second, 10*time.Millisecond, func() (bool, error) {
		_, err = RunDatagram(context.Background(), DatagramConfig{Addr: addr, Count: 10, Size: 100, Rate: 10_000_000})
		return err != nil, nil
	})
	if err == nil || !strings.Contains(err.Error(), "start: listener: busy: 64 control connections are open") {
		t.Fatalf("a client over the cap: %v, want the listener's busy answer", err)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	for try := 0; try < 50; try++ {
		if _, err = RunDatagram(context.Background(), DatagramConfig{Addr: addr, Count: 100, Size: 100, Rate: 10_000_000}); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal(err)
}

// TestStartAndStopChecked: absurd or hostile fields are refused, and a
// client's strings reach the log quoted, on one line.
func TestStartAndStopChecked(t *testing.T) {
	ln, pc, err := serverkit.ListenPair("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logged []string
	s := &Server{Grace: time.Millisecond, IdleTimeout: 2 * time.Second, Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(f, a...))
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, pc, ln) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()
	for _, tc := range []struct{ line, want string }{
		{`{"op":"start","workload":"jitter\nforged 1 of 1 datagrams received"}`, `workload "jitter\nforged`},
		{`{"op":"start","workload":"datagram","size":-1}`, "size -1"},
		{`{"op":"start","workload":"datagram","size":70000}`, "size 70000"},
		{`{"op":"start","workload":"datagram","interval_ns":-10000000}`, "interval -10ms"},
		{`{"op":"start","workload":"datagram","interval_ns":9223372036854775807}`, "interval 2562047h"},
		{`{"op":"` + strings.Repeat("z", 1000) + `"}`, "unknown op"},
	} {
		resp := dialControl(t, addr).do(t, tc.line)
		if !strings.Contains(resp.Error, tc.want) {
			t.Errorf("%.60s: error %q, want %q", tc.line, resp.Error, tc.want)
		}
		if len(resp.Error) > 200 {
			t.Errorf("%.60s: error of %d bytes", tc.line, len(resp.Error))
		}
	}
	// Negative and absurd sent counts.
	for _, sent := range []string{"-5", "9223372036854775807"} {
		// The server lets go of the last test once it has read its
		// connection's close, which may come after this start: busy until
		// then.
		var rc *rawControl
		for deadline := time.Now().Add(2 * time.Second); ; {
			rc = dialControl(t, addr)
			resp := rc.do(t, `{"op":"start","workload":"datagram","size":100}`)
			if resp.Error == "" {
				break
			}
			if !strings.Contains(resp.Error, "busy") || time.Now().After(deadline) {
				t.Fatal(resp.Error)
			}
			rc.c.Close()
			time.Sleep(10 * time.Millisecond)
		}
		if resp := rc.do(t, `{"op":"stop","sent":`+sent+`}`); !strings.Contains(resp.Error, "sent "+sent) {
			t.Errorf("stop with sent %s: %+v", sent, resp)
		}
		rc.c.Close()
	}
	// A workload with a newline, once allowed, would have forged a line:
	// every logged line is one line.
	if _, err := RunJitter(context.Background(), JitterConfig{Addr: addr, Rate: 1_000_000, Size: 100, Duration: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range logged {
		if strings.ContainsAny(l, "\n\r") {
			t.Errorf("log line spans lines: %q", l)
		}
	}
}

// TestMeterRecordsBounded: a long test with a short interval keeps at most
// MaxRecords intervals, coarsened, with the same totals.
func TestMeterRecordsBounded(t *testing.T) {
	m := NewMeter(workload.MinInterval)
	const n = 3 * MaxRecords
	var seq uint64
	for k := range n {
		at := time.Duration(k)*workload.MinInterval + workload.MinInterval/2
		if k%7 == 3 {
			seq++ // one lost
		}
		m.Add(at, seq, 100, time.Millisecond)
		seq++
	}
	rep := m.Report(time.Duration(n)*workload.MinInterval, int64(seq))
	if len(rep.Intervals) > MaxRecords {
		t.Fatalf("%d intervals", len(rep.Intervals))
	}
	var pk, lost int64
	for i, s := range rep.Intervals {
		pk += s.Packets
		lost += s.Lost
		if i > 0 && s.Start != rep.Intervals[i-1].End {
			t.Fatalf("interval %d starts at %s, the last ended at %s", i, s.Start, rep.Intervals[i-1].End)
		}
	}
	if pk != n || pk != rep.Total.Packets || lost != rep.Total.Lost || lost == 0 {
		t.Errorf("intervals: %d packets, %d lost; total %+v", pk, lost, rep.Total)
	}
	if d := rep.Intervals[0].End - rep.Intervals[0].Start; d != 4*workload.MinInterval {
		t.Errorf("interval %s, want %s", d, 4*workload.MinInterval)
	}
	b, _ := json.Marshal(rep)
	t.Logf("%d datagrams at %s: %d intervals of %s, a %d-byte report", n, workload.MinInterval, len(rep.Intervals),
		rep.Intervals[0].End-rep.Intervals[0].Start, len(b))
}

// FuzzControl feeds a control connection's bytes to the listener: it
// answers each line with one JSON line or closes, never panics, and leaves
// no test running once the connection is gone.
func FuzzControl(f *testing.F) {
	f.Add([]byte(`{"op":"start","workload":"jitter","size":100,"interval_ns":10000000}` + "\n" + `{"op":"stop","sent":10}` + "\n"))
	f.Add([]byte(`{"op":"start","workload":"datagram"}` + "\n" + `{"op":"stop","sent":-1}` + "\n"))
	f.Add([]byte("nonsense\n{\"op\":\"start\"}\n"))
	f.Add([]byte(`{"op":"stop"}`))
	f.Add([]byte(`{"op":"start","workload":"jitter"}` + "\n" + `{"op":"start","workload":"jitter"}` + "\n"))
	f.Add(bytes.Repeat([]byte("a"), 70000))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &Server{Grace: time.Nanosecond, IdleTimeout: time.Second}
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.control(context.Background(), server)
		}()
		go func() {
			_, _ = client.Write(data)
			_ = client.Close() // (net.Pipe: the reader below then ends too)
		}()
		var out bytes.Buffer
		_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(&out, client)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("control did not return")
		}
		if s.running() != 0 {
			t.Fatal("a test still runs after its connection closed")
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var r response
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("answer %q: %v", line, err)
			}
			if len(r.Error) > 300 {
				t.Fatalf("error of %d bytes", len(r.Error))
			}
		}
	})
}

// FuzzMeter feeds a meter arbitrary arrivals: its intervals stay bounded,
// contiguous, and add up to the total.
func FuzzMeter(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 5, 4, 200, 6}, int64(10), uint8(1))
	f.Add([]byte{255, 0, 255, 0}, int64(-1), uint8(0))
	f.Fuzz(func(t *testing.T, arrivals []byte, sent int64, step uint8) {
		m := NewMeter(workload.MinInterval)
		var at time.Duration
		for i, b := range arrivals {
			at += time.Duration(step) * workload.MinInterval / 4
			seq := uint64(i) + uint64(b%16) - 8 // some late, some ahead
			if b == 255 {
				seq = 1 << 40 // implausibly far ahead
			}
			m.Add(at, seq, 100, 0)
		}
		if sent < 0 {
			sent = 0
		}
		rep := m.Report(at+workload.MinInterval, sent)
		if len(rep.Intervals) > MaxRecords+1 {
			t.Fatalf("%d intervals", len(rep.Intervals))
		}
		var pk, lost int64
		for i, s := range rep.Intervals {
			pk += s.Packets
			lost += s.Lost
			if s.Lost < 0 || (i > 0 && s.Start != rep.Intervals[i-1].End) {
				t.Fatalf("interval %d: %+v after %+v", i, s, rep.Intervals[i-1])
			}
		}
		if pk != rep.Total.Packets {
			t.Fatalf("intervals hold %d packets, total %d", pk, rep.Total.Packets)
		}
		if lost != rep.Total.Lost && len(rep.Intervals) > 0 {
			t.Fatalf("intervals lost %d, total %d", lost, rep.Total.Lost)
		}
	})
}
