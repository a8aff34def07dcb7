package conns_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/conns"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/rr"
)

func TestFit(t *testing.T) {
	for _, c := range []struct {
		name             string
		n, files, lo, hi int
		avail            int64
		want             string
	}{
		{"fits", 10000, 20000, 32768, 60999, 8 << 30, ""},
		{"files", 19800, 20000, 32768, 60999, 8 << 30, "open files limit is 20000"},
		{"ports", 500000, 1 << 20, 32768, 60999, 64 << 30, "at most 451712"},
		{"memory", 100000, 1 << 20, 1024, 65535, 1 << 30, "more than half of the 1024 MiB"},
		{"memory unknown", 100000, 1 << 20, 1024, 65535, 0, ""},
		{"range unknown", 100000, 1 << 20, 0, 0, 8 << 30, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := conns.Fit(c.n, descriptors.ConnsHoldPorts, c.files, c.lo, c.hi, c.avail)
			if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("Fit: %v, want %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
		})
	}
}

func TestParsePortRange(t *testing.T) {
	for _, c := range []struct {
		in     string
		lo, hi int
		ok     bool
	}{
		{"32768\t60999\n", 32768, 60999, true},
		{"1024 65535", 1024, 65535, true},
		{"60999 32768", 0, 0, false},
		{"0 10", 0, 0, false},
		{"1 70000", 0, 0, false},
		{"32768", 0, 0, false},
		{"a b", 0, 0, false},
	} {
		lo, hi, ok := conns.ParsePortRange(c.in)
		if lo != c.lo || hi != c.hi || ok != c.ok {
			t.Errorf("ParsePortRange(%q) = %d, %d, %v; want %d, %d, %v", c.in, lo, hi, ok, c.lo, c.hi, c.ok)
		}
	}
}

func TestParseMemAvailable(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"MemTotal:       24683520 kB\nMemFree:        17021680 kB\nMemAvailable:   23476544 kB\n", 23476544 << 10},
		{"MemTotal: 1 kB\n", 0},
		{"MemAvailable: 12 MB\n", 0},
		{"MemAvailable: -5 kB\n", 0},
		{"MemAvailable: 99999999999999999999 kB\n", 0},
	} {
		if got := conns.ParseMemAvailable(c.in); got != c.want {
			t.Errorf("ParseMemAvailable(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestServerPorts(t *testing.T) {
	for _, c := range []struct {
		addr string
		want int
	}{
		{":5210", 5210},
		{"198.18.0.2:5210", 5210},
		{"[2001:2::2]:6000", 6000},
		{":65519", 65519},
		{":65520", 0},
		{":0", 0},
		{"5210", 0},
		{":x", 0},
	} {
		got, err := conns.ServerPorts(c.addr)
		if got != c.want || (err == nil) != (c.want != 0) {
			t.Errorf("ServerPorts(%q) = %d, %v; want %d", c.addr, got, err, c.want)
		}
	}
}

func FuzzParsers(f *testing.F) {
	for _, s := range []string{"32768\t60999\n", "MemAvailable: 1 kB", ":5210", "[::1]:65519", "1 70000", ":-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if lo, hi, ok := conns.ParsePortRange(s); ok && (lo < 1 || hi > 65535 || lo > hi) {
			t.Errorf("ParsePortRange(%q) = %d..%d", s, lo, hi)
		}
		if n := conns.ParseMemAvailable(s); n < 0 {
			t.Errorf("ParseMemAvailable(%q) = %d", s, n)
		}
		if p, err := conns.ServerPorts(s); err == nil && (p < 1 || p+descriptors.ConnsHoldPorts > 65535) {
			t.Errorf("ServerPorts(%q) = %d", s, p)
		}
	})
}

// TestHoldOnLoopback: a holder and a client on loopback: every
// connection is held, the probe measures beside them; with a holder
// whose cap is below the connections, the ones beyond it are closed at
// once and the client counts them lost.
func TestHoldOnLoopback(t *testing.T) {
	for _, c := range []struct {
		name     string
		max, n   int
		trickle  time.Duration
		wantLost bool
	}{
		{"idle", 1000, 300, 0, false},
		{"trickle", 1000, 300, 100 * time.Millisecond, false},
		{"over the cap", 100, 300, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			port, h, s := listen(t, c.max)
			ctx, cancel := context.WithCancel(context.Background())
			served, rrDone := make(chan error, 1), make(chan error, 1)
			go func() { served <- h.Serve(ctx, t.Logf) }()
			go func() { rrDone <- s.Serve(ctx, nil) }()
			res, err := conns.Run(context.Background(), conns.Config{Addr: fmt.Sprintf("127.0.0.1:%d", port), Connections: c.n,
				Trickle: c.trickle, Timeout: 2 * time.Second, Duration: 500 * time.Millisecond, Interval: 100 * time.Millisecond})
			cancel()
			if err := <-served; err != nil {
				t.Errorf("holder: %v", err)
			}
			if err := <-rrDone; err != nil {
				t.Errorf("rr server: %v", err)
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			t.Logf("%+v", res)
			if res.Established != int64(c.n) || res.RoundTrip.P50 <= 0 || (res.Lost > 0) != c.wantLost {
				t.Errorf("%+v: want %d established, a round trip, lost > 0 %v", res, c.n, c.wantLost)
			}
			if c.wantLost && res.Lost != int64(c.n-c.max) {
				t.Errorf("lost %d, want the %d over the cap", res.Lost, c.n-c.max)
			}
		})
	}
}

// listen starts an rr server and a holder on loopback, on a port whose
// holding ports after it are free too.
func listen(t *testing.T, max int) (int, *conns.Holder, *rr.Server) {
	for range 50 {
		port := 20000 + rand.IntN(40000)
		s, err := rr.Listen(fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		h, err := conns.ListenHold("127.0.0.1", port+1, descriptors.ConnsHoldPorts, max)
		if err != nil {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_ = s.Serve(ctx, nil)
			continue
		}
		return port, h, s
	}
	t.Fatal("no free ports on loopback")
	return 0, nil, nil
}

func TestTrickleBound(t *testing.T) {
	for _, c := range []struct {
		n     int64
		every time.Duration
		ok    bool
	}{
		{1 << 20, 0, true},
		{200_000, time.Second, true},
		{200_001, time.Second, false},
		{1 << 20, 5 * time.Second, false},
		{1 << 20, 6 * time.Second, true},
	} {
		if err := descriptors.ConnsTrickleFits(c.n, c.every); (err == nil) != c.ok {
			t.Errorf("%d connections every %s: %v, want ok %v", c.n, c.every, err, c.ok)
		}
	}
}
