package rr

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/hdrtime"
)

// startServer runs an rr server on a free loopback port until the test ends.
func startServer(t testing.TB) string {
	t.Helper()
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return s.Addr()
}

func TestValidate(t *testing.T) {
	ok := Config{Addr: "127.0.0.1", Duration: time.Second}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string // substring of the error; "" for none
	}{
		{"defaults", func(*Config) {}, ""},
		{"no server", func(c *Config) { c.Addr = "" }, "--server"},
		{"unknown mode", func(c *Config) { c.Protocol = "sctp" }, `--protocol "sctp"`},
		{"zero duration", func(c *Config) { c.Duration = 0 }, "--time"},
		{"negative duration", func(c *Config) { c.Duration = -time.Second }, "--time -1s"},
		{"negative omit", func(c *Config) { c.Omit = -1 }, "--omit"},
		{"tiny interval", func(c *Config) { c.Interval = time.Microsecond }, "--interval"},
		{"negative request", func(c *Config) { c.RequestSize = -1 }, "--request -1"},
		{"udp request too big", func(c *Config) { c.Protocol = "udp"; c.RequestSize = 65508 }, "--request 65508"},
		{"udp response too big", func(c *Config) { c.Protocol = "udp"; c.RequestSize = 8; c.ResponseSize = 70000 }, "--response 70000"},
		{"udp largest", func(c *Config) { c.Protocol = "udp"; c.RequestSize = 65507; c.ResponseSize = 65507 }, ""},
		{"udp small request, other response", func(c *Config) { c.Protocol = "udp"; c.RequestSize = 2; c.ResponseSize = 100 }, ""},
		{"day-long test", func(c *Config) { c.Duration = 24 * time.Hour }, ""},
		{"too long", func(c *Config) { c.Duration = 24*time.Hour + 1 }, "--time"},
		{"omit too long", func(c *Config) { c.Omit = 25 * time.Hour }, "--omit"},
		{"interval too long", func(c *Config) { c.Interval = 25 * time.Hour }, "--interval"},
		{"timeout too long", func(c *Config) { c.Timeout = 2 * time.Hour }, "--timeout"},
		{"tcp 16 MiB", func(c *Config) { c.RequestSize = 16 << 20; c.ResponseSize = 16 << 20 }, ""},
		{"tcp above 16 MiB", func(c *Config) { c.ResponseSize = 16<<20 + 1 }, "--response"},
		{"crr", func(c *Config) { c.Protocol = "crr" }, ""},
		{"parallel 0 is 1", func(c *Config) { c.Parallel = 0 }, ""},
		{"parallel too many", func(c *Config) { c.Parallel = 257 }, "--parallel 257"},
		{"negative parallel", func(c *Config) { c.Parallel = -2 }, "--parallel -2"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "--timeout"},
		{"bad address", func(c *Config) { c.Addr = "a:b:c:d" }, ""}, // an IPv6 literal without port: gets 5202
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("no error, want %q", tc.want)
			case err != nil && (!strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
				t.Fatalf("error %q: want one line containing %q", err, tc.want)
			}
		})
	}
}

func checkResult(t *testing.T, res Result, mode string) {
	t.Helper()
	rt := res.RoundTrip
	if res.Workload != "rr" || res.Protocol != mode {
		t.Errorf("workload/mode = %q/%q", res.Workload, res.Protocol)
	}
	if res.Transactions <= 0 || res.TransPerSec <= 0 {
		t.Fatalf("transactions %d, %.0f/s: want > 0", res.Transactions, res.TransPerSec)
	}
	if !(rt.P50 > 0 && rt.Min <= rt.P50 && rt.P50 <= rt.P90 && rt.P90 <= rt.P99 && rt.P99 <= rt.P999 && rt.P999 <= rt.Max) {
		t.Errorf("round trip not ordered: %+v", rt)
	}
	if !(rt.Min <= rt.Mean && rt.Mean <= rt.Max) {
		t.Errorf("mean outside [min, max]: %+v", rt)
	}
	if res.OneWay.P50 != rt.P50/2 || res.OneWay.P99 != rt.P99/2 || res.OneWay.Max != rt.Max/2 {
		t.Errorf("one way %+v is not round trip / 2 (%+v)", res.OneWay, rt)
	}
	if len(res.Histogram) == 0 || len(res.Histogram) > maxBuckets {
		t.Fatalf("histogram has %d buckets", len(res.Histogram))
	}
	last := res.Histogram[len(res.Histogram)-1]
	if last.Count != res.Transactions || last.Percentile != 100 {
		t.Errorf("last bucket %+v: want count %d at 100", last, res.Transactions)
	}
	for i := 1; i < len(res.Histogram); i++ {
		a, b := res.Histogram[i-1], res.Histogram[i]
		if b.ValueUS < a.ValueUS || b.Percentile < a.Percentile || b.Count < a.Count {
			t.Fatalf("histogram not monotone at %d: %+v, %+v", i, a, b)
		}
	}
	if math.Abs(res.TransPerSec*res.Duration-float64(res.Transactions)) > 1 {
		t.Errorf("trans/s %.1f × %.3f s != %d", res.TransPerSec, res.Duration, res.Transactions)
	}
}

func TestRunModes(t *testing.T) {
	// A server in another process, as in a run: in this one, its hot
	// threads and the client's would share the Ps, and each transaction
	// would wait for sysmon's preemption (25 a second).
	addr := serverProcess(t)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"tcp", Config{Protocol: "tcp"}},
		{"tcp parallel", Config{Protocol: "tcp", Parallel: 4, RequestSize: 64, ResponseSize: 1024}},
		{"tcp 100 kB response", Config{Protocol: "tcp", RequestSize: 3, ResponseSize: 100_000}},
		{"tcp 100 kB request", Config{Protocol: "tcp", RequestSize: 100_000, ResponseSize: 1}},
		{"tcp 2 MiB both", Config{Protocol: "tcp", RequestSize: 2 << 20, ResponseSize: 2 << 20}},
		{"udp", Config{Protocol: "udp"}},
		{"udp seq", Config{Protocol: "udp", RequestSize: 100, ResponseSize: 1400, Parallel: 2}},
		{"udp largest", Config{Protocol: "udp", RequestSize: 65507, ResponseSize: 65507}},
		{"crr", Config{Protocol: "crr"}},
		{"crr 100 kB response", Config{Protocol: "crr", RequestSize: 100_000, ResponseSize: 100_000, Parallel: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Addr = addr
			cfg.Duration = time.Second
			cfg.Interval = 250 * time.Millisecond
			var ivs []Interval
			res, err := Run(context.Background(), cfg, func(iv Interval) { ivs = append(ivs, iv) })
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, res, cfg.Protocol)
			if res.Lost != 0 {
				t.Errorf("lost %d on loopback", res.Lost)
			}
			if d := res.Duration; d < 0.95 || d > 1.05 {
				t.Errorf("duration %.3f s, want 1", d)
			}
			if len(ivs) != 4 {
				t.Errorf("%d intervals, want 4: %+v", len(ivs), ivs)
			}
			var n int64
			for _, iv := range ivs {
				n += iv.Transactions
			}
			if n != res.Transactions {
				t.Errorf("intervals sum to %d transactions, result %d", n, res.Transactions)
			}
			// TCP_INFO: tcp reads each worker's connection, crr each
			// measured transaction's; udp has none.
			switch want := int64(cfg.Parallel); {
			case cfg.Protocol == "udp":
				if res.TCP != nil {
					t.Errorf("udp has TCP_INFO: %+v", res.TCP)
				}
			case res.TCP == nil:
				t.Error("no TCP_INFO")
			case cfg.Protocol == "crr" && res.TCP.Connections != res.Transactions,
				cfg.Protocol == "tcp" && res.TCP.Connections != max(want, 1):
				t.Errorf("TCP_INFO of %d connections, %d transactions", res.TCP.Connections, res.Transactions)
			case res.TCP.RTTUS <= 0 || res.TCP.CwndMin < 1:
				t.Errorf("TCP_INFO %+v: want an RTT and a window", *res.TCP)
			}
			t.Logf("%s: %d transactions, %.0f/s, rtt p50 %.1f µs p99 %.1f µs", tc.name, res.Transactions, res.TransPerSec, res.RoundTrip.P50, res.RoundTrip.P99)
		})
	}
}

func TestOmitAndIntervals(t *testing.T) {
	addr := startServer(t)
	var ivs []Interval
	res, err := Run(context.Background(), Config{Addr: addr, Duration: 600 * time.Millisecond,
		Omit: 300 * time.Millisecond, Interval: 200 * time.Millisecond}, func(iv Interval) { ivs = append(ivs, iv) })
	if err != nil {
		t.Fatal(err)
	}
	// 0-0.2, 0.2-0.3 omitted; 0.3-0.5, 0.5-0.7, 0.7-0.9 measured.
	want := []struct {
		start, end float64
		omitted    bool
	}{{0, 0.2, true}, {0.2, 0.3, true}, {0.3, 0.5, false}, {0.5, 0.7, false}, {0.7, 0.9, false}}
	if len(ivs) != len(want) {
		t.Fatalf("intervals %+v", ivs)
	}
	var measured int64
	for i, w := range want {
		iv := ivs[i]
		if math.Abs(iv.Start-w.start) > 1e-9 || math.Abs(iv.End-w.end) > 1e-9 || iv.Omitted != w.omitted {
			t.Errorf("interval %d = %+v, want %+v", i, iv, w)
		}
		// A stall of a busy machine may leave a short interval empty; what
		// an interval holds must be consistent.
		if iv.Transactions < 0 || (iv.Transactions > 0 && (iv.P50 <= 0 || iv.P99 < iv.P50)) {
			t.Errorf("interval %d = %+v", i, iv)
		}
		if !iv.Omitted {
			measured += iv.Transactions
		}
	}
	if measured != res.Transactions || measured == 0 {
		t.Errorf("measured intervals %d transactions, result %d", measured, res.Transactions)
	}
	if math.Abs(res.Duration-0.6) > 0.03 {
		t.Errorf("duration %.3f, want 0.6", res.Duration)
	}
}

// fakeUDPServer opens udp tests as the server does (control connection,
// token, registration) and hands every other datagram to answer; it
// returns the address.
func fakeUDPServer(t *testing.T, answer func(pc net.PacketConn, req []byte, from net.Addr)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", ln.Addr().String())
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); pc.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var hb [helloLen]byte
				if _, err := io.ReadFull(c, hb[:]); err != nil {
					return
				}
				c.Write([]byte("12345678"))
				io.Copy(io.Discard, c)
			}()
		}
	}()
	go func() {
		buf := make([]byte, 70000)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if _, ok := parseReg(buf[:n]); ok {
				pc.WriteTo(buf[:n], from)
				continue
			}
			answer(pc, buf[:n], from)
		}
	}()
	return ln.Addr().String()
}

// TestUDPLoss: a server that reads but never answers.
func TestUDPLoss(t *testing.T) {
	addr := fakeUDPServer(t, func(net.PacketConn, []byte, net.Addr) {})
	for _, tc := range []struct {
		req, resp int
	}{{1, 1}, {64, 64}} {
		began := time.Now()
		var ivLost int64
		res, err := Run(context.Background(), Config{Addr: addr, Protocol: "udp",
			RequestSize: tc.req, ResponseSize: tc.resp, Parallel: 2,
			Duration: 500 * time.Millisecond, Timeout: 50 * time.Millisecond, Interval: 100 * time.Millisecond},
			func(iv Interval) { ivLost += iv.Lost })
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("took %s", took)
		}
		// 2 workers × 500 ms / 50 ms ≈ 20 losses (the last one cut by the end).
		if res.Transactions != 0 || res.Lost < 14 || res.Lost > 20 {
			t.Errorf("transactions %d, lost %d: want 0 and about 18", res.Transactions, res.Lost)
		}
		if ivLost != res.Lost {
			t.Errorf("intervals lost %d, result %d", ivLost, res.Lost)
		}
	}
}

// TestUDPLateAnswers: a server that answers only every other request, late:
// the client counts the unanswered ones as lost and does not take a late
// answer for the next request's.
func TestUDPLateAnswers(t *testing.T) {
	var i int
	addr := fakeUDPServer(t, func(pc net.PacketConn, req []byte, from net.Addr) {
		if i++; i%2 == 1 {
			go func(b []byte) {
				// Well after the client's timeout, and the timeout well above
				// a busy machine's scheduling delays, so that only the
				// late answers count as lost.
				time.Sleep(250 * time.Millisecond)
				pc.WriteTo(b, from)
			}(append([]byte(nil), req...))
		} else {
			pc.WriteTo(req, from)
		}
	})
	res, err := Run(context.Background(), Config{Addr: addr, Protocol: "udp",
		RequestSize: 16, ResponseSize: 16, Duration: 1500 * time.Millisecond, Timeout: 100 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost == 0 || res.Transactions == 0 {
		t.Fatalf("lost %d, transactions %d", res.Lost, res.Transactions)
	}
	if d := res.Lost - res.Transactions; d < -1 || d > 1 {
		t.Errorf("lost %d, transactions %d: want every other", res.Lost, res.Transactions)
	}
	if res.RoundTrip.Max > 100_000 {
		t.Errorf("max round trip %.0f µs: a late answer was counted", res.RoundTrip.Max)
	}
}

func TestUDPNoServer(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	_, err = Run(context.Background(), Config{Addr: addr, Protocol: "udp", Duration: time.Second, Timeout: 50 * time.Millisecond}, nil)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v, want refused", err)
	}
}

func TestTCPNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, mode := range []string{"tcp", "crr"} {
		if _, err := Run(context.Background(), Config{Addr: addr, Protocol: mode, Duration: time.Second}, nil); err == nil {
			t.Errorf("%s: no error without a server", mode)
		}
	}
}

// TestServerExactSizes talks the protocol by hand: the server reads exactly
// the request size and writes exactly the response size, transaction after
// transaction.
func TestServerExactSizes(t *testing.T) {
	addr := startServer(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var hb [helloLen]byte
	hello{0, 5, 100_000}.put(hb[:])
	if _, err := c.Write(hb[:]); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 200_000)
	for i := 0; i < 3; i++ {
		// The request in two pieces: no answer before the 5th byte.
		c.Write([]byte{1, 2, 3})
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if n, err := c.Read(buf); n != 0 || err == nil {
			t.Fatalf("answer after 3 of 5 bytes: %d, %v", n, err)
		}
		c.Write([]byte{4, 5})
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := io.ReadFull(c, buf[:100_000]); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if n, err := c.Read(buf); n != 0 || err == nil {
			t.Fatalf("%d bytes beyond the response", n)
		}
	}
	// UDP: the sizes from the test's hello; the first 8 bytes echoed.
	for _, tc := range []struct {
		req  []byte
		want int
	}{{[]byte{0, 0, 0x05, 0xdc, 0, 0, 0, 7, 9}, 1500}, {[]byte{1}, 1}, {[]byte{1, 2}, 200}, {[]byte{0, 0, 0, 3}, 3}} {
		u, _ := openUDPTest(t, addr, len(tc.req), tc.want)
		for range 2 {
			u.Write(tc.req)
			u.SetReadDeadline(time.Now().Add(2 * time.Second))
			n, err := u.Read(buf)
			if err != nil || n != tc.want {
				t.Fatalf("udp %v: %d bytes, %v; want %d", tc.req, n, err, tc.want)
			}
			if k := min(8, len(tc.req), n); string(buf[:k]) != string(tc.req[:k]) {
				t.Errorf("udp %v: response starts %v", tc.req, buf[:k])
			}
		}
		// A datagram of another size than the test's is not answered.
		u.Write(append(tc.req, 0))
		u.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if n, err := u.Read(buf); err == nil {
			t.Errorf("udp: %d bytes answered to a request of another size", n)
		}
	}
}

// openUDPTest opens a udp test by hand: a control connection (returned)
// and a registered UDP socket.
func openUDPTest(t *testing.T, addr string, req, resp int) (net.Conn, net.Conn) {
	t.Helper()
	ctl, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	var hb [helloLen]byte
	hello{flagUDP, uint32(req), uint32(resp)}.put(hb[:])
	ctl.SetDeadline(time.Now().Add(5 * time.Second))
	ctl.Write(hb[:])
	var token [tokenLen]byte
	if _, err := io.ReadFull(ctl, token[:]); err != nil {
		t.Fatalf("no token: %v", err)
	}
	ctl.SetDeadline(time.Time{})
	u, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	reg := make([]byte, regLen)
	putReg(reg, token)
	u.Write(reg)
	u.SetReadDeadline(time.Now().Add(2 * time.Second))
	ack := make([]byte, 100)
	if n, err := u.Read(ack); err != nil || string(ack[:n]) != string(reg) {
		t.Fatalf("registration: %q, %v", ack[:n], err)
	}
	return u, ctl
}

// TestServerSurvivesBadClients: garbage, a client gone mid-request, a client
// killed mid-run, a bad UDP size: the server keeps serving.
func TestServerSurvivesBadClients(t *testing.T) {
	addr := startServer(t)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var hb [helloLen]byte
	// Garbage hello.
	c := dial()
	c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(hb[:]); err == nil {
		t.Error("garbage got an answer")
	}
	c.Close()
	// Sizes out of range.
	c = dial()
	hello{0, 0, descriptors.RRMaxTCPSize + 1}.put(hb[:])
	c.Write(hb[:])
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(hb[:]); err == nil {
		t.Error("bad sizes got an answer")
	}
	c.Close()
	// Half a hello, half a request, a response not read.
	c = dial()
	c.Write(hb[:7])
	c.Close()
	c = dial()
	hello{0, 1000, 1 << 20}.put(hb[:])
	c.Write(hb[:])
	c.Write(make([]byte, 500))
	c.Close()
	c = dial()
	c.Write(hb[:])
	c.Write(make([]byte, 1000)) // the server writes 1 MiB nobody reads
	// Close once the server is writing it: its first byte is here.
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, hb[:1]); err != nil {
		t.Fatalf("the server never began its 1 MiB response: %v", err)
	}
	c.Close()
	// Bad UDP size.
	u, _ := net.Dial("udp", addr)
	u.Write([]byte{0xff, 0xff, 0xff, 0xff, 0})
	u.Close()

	// A client's connections shut down under it mid-run (the client
	// works on its own duplicate of each socket: shut the socket down).
	var mu sync.Mutex
	var files []*os.File
	ctx, cancel := context.WithCancel(context.Background())
	dialKeep := func(ctx context.Context, network, a string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, a)
		if err == nil {
			f, ferr := c.(*net.TCPConn).File()
			if ferr != nil {
				c.Close()
				return nil, ferr
			}
			mu.Lock()
			files = append(files, f)
			mu.Unlock()
		}
		return c, err
	}
	go func() {
		// Shut the connections down once the client has dialled all three
		// and runs.
		_ = poll.Until(ctx, 5*time.Second, time.Millisecond, func() (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			return len(files) == 3, nil
		})
		mu.Lock()
		for _, f := range files {
			syscall.Shutdown(int(f.Fd()), syscall.SHUT_RDWR)
			f.Close()
		}
		mu.Unlock()
	}()
	_, err := Run(ctx, Config{Addr: addr, Duration: 2 * time.Second, Parallel: 3, Dial: dialKeep}, nil)
	cancel()
	if err == nil {
		t.Error("a client whose connections were closed under it reported no error")
	}

	// And the server still serves.
	for _, mode := range []string{"tcp", "udp", "crr"} {
		res, err := Run(context.Background(), Config{Addr: addr, Protocol: mode, Duration: 200 * time.Millisecond}, nil)
		if err != nil || res.Transactions == 0 {
			t.Fatalf("%s after bad clients: %d transactions, %v", mode, res.Transactions, err)
		}
	}
}

func TestCancel(t *testing.T) {
	addr := startServer(t)
	for _, mode := range []string{"tcp", "udp", "crr"} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		began := time.Now()
		res, err := Run(ctx, Config{Addr: addr, Protocol: mode, Duration: 10 * time.Second, Omit: 100 * time.Millisecond}, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", mode, err)
		}
		if took := time.Since(began); took > time.Second {
			t.Errorf("%s: took %s after cancel", mode, took)
		}
		if res.Transactions == 0 || res.Duration < 0.15 || res.Duration > 0.3 {
			t.Errorf("%s: partial result %d transactions over %.3f s", mode, res.Transactions, res.Duration)
		}
	}
}

func TestHistogramArithmetic(t *testing.T) {
	h := hdrtime.New()
	for v := 1; v <= 100; v++ {
		hdrtime.Record(h, time.Duration(v)*time.Microsecond)
	}
	l := Latency(hdrtime.Summarise(h))
	near := func(name string, got, want, tol float64) {
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %v, want %v ± %v", name, got, want, tol)
		}
	}
	// 3 significant digits: within 0.1 % (HDR reports a bucket's top for
	// percentiles and max, its bottom for min, its middle for the mean).
	near("min", l.Min, 1, 0.001)
	near("p50", l.P50, 50, 0.05)
	near("p90", l.P90, 90, 0.09)
	near("p99", l.P99, 99, 0.1)
	near("p99.9", l.P999, 100, 0.1)
	near("max", l.Max, 100, 0.1)
	near("mean", l.Mean, 50.5, 0.05)
	half := l.Half()
	if half.P50 != l.P50/2 || half.Mean != l.Mean/2 || half.Min != l.Min/2 {
		t.Errorf("Half %+v of %+v", half, l)
	}
	b := buckets(h)
	if len(b) == 0 || len(b) > maxBuckets || b[0].Count != 1 || b[len(b)-1].Count != 100 || b[len(b)-1].Percentile != 100 {
		t.Errorf("buckets %+v", b)
	}
	for _, x := range b {
		// Count values are ≤ ValueUS: with 1..100 µs that is floor(ValueUS).
		if want := int64(math.Floor(x.ValueUS + 0.001)); x.Count != want {
			t.Errorf("bucket %+v: count want %d", x, want)
		}
	}
	// Out of range values are clamped, not lost; an empty histogram gives zeros.
	hdrtime.Record(h, 0)
	hdrtime.Record(h, time.Hour)
	if h.TotalCount() != 102 || Latency(hdrtime.Summarise(hdrtime.New())) != (Latency{}) || buckets(hdrtime.New()) != nil {
		t.Error("clamping or the empty histogram")
	}
	// A wide distribution stays within maxBuckets.
	w := hdrtime.New()
	for v := int64(1); v < int64(50*time.Second); v = v*11/10 + 1 {
		hdrtime.Record(w, time.Duration(v))
	}
	if n := len(buckets(w)); n == 0 || n > maxBuckets {
		t.Errorf("%d buckets", n)
	}
}
