package rr

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// startServerWith runs a server with the given limits until the test ends.
func startServerWith(t *testing.T, idle time.Duration, maxConns int) (string, *Server) {
	t.Helper()
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.IdleTimeout, s.MaxConns = idle, maxConns
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return s.Addr(), s
}

// TestUDPNoReflection: the amplifier found once. A 4-byte datagram asking for
// 65,507 bytes, from a socket that opened no test, is not answered; nor is
// a registration with a wrong token, nor a test's datagram of another size.
func TestUDPNoReflection(t *testing.T) {
	addr := startServer(t)
	u, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var big [4]byte
	binary.BigEndian.PutUint32(big[:], descriptors.MaxUDPPayload)
	reg := make([]byte, regLen)
	putReg(reg, [tokenLen]byte{1, 2, 3})
	sent := 0
	for _, d := range [][]byte{big[:], {1}, reg, make([]byte, 1000)} {
		for range 10 {
			n, _ := u.Write(d)
			sent += n
		}
	}
	got := 0
	buf := make([]byte, descriptors.MaxUDPPayload+1)
	for {
		u.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := u.Read(buf)
		if err != nil {
			break
		}
		got += n
	}
	t.Logf("no test: %d bytes sent, %d answered", sent, got)
	if got != 0 {
		t.Errorf("%d bytes answered to %d bytes of datagrams without a test", got, sent)
	}
	// With a test of 4-byte requests and 4-byte responses: never more than
	// it asked for.
	tu, _ := openUDPTest(t, addr, 4, 4)
	sent, got = 0, 0
	for _, d := range [][]byte{big[:], make([]byte, 5), {9}, make([]byte, descriptors.MaxUDPPayload)} {
		n, _ := tu.Write(d)
		sent += n
	}
	for {
		tu.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := tu.Read(buf)
		if err != nil {
			break
		}
		got += n
	}
	t.Logf("test of 4/4 bytes: %d bytes sent, %d answered", sent, got)
	if got != 4 {
		t.Errorf("%d bytes answered, want 4 (one request of the test's size)", got)
	}
}

// TestRegisterOnlyFromControlIP: a registration counts only from the IP
// address of the test's control connection (a spoofed source is refused).
func TestRegisterOnlyFromControlIP(t *testing.T) {
	var pt peerTable
	p := &udpPeer{token: [tokenLen]byte{7}, ip: netip.MustParseAddr("127.0.0.1"), req: 1, resp: 1000}
	pt.add(p)
	if pt.register(p.token, netip.MustParseAddrPort("192.0.2.1:5000")) != nil {
		t.Error("registered from another IP")
	}
	if pt.register([tokenLen]byte{8}, netip.MustParseAddrPort("127.0.0.1:5000")) != nil {
		t.Error("registered with an unknown token")
	}
	a := netip.MustParseAddrPort("127.0.0.1:5000")
	if pt.register(p.token, a) != p || pt.lookup(a) != p {
		t.Fatal("not registered from the control connection's IP")
	}
	q := &udpPeer{token: [tokenLen]byte{9}, ip: p.ip}
	pt.add(q)
	if pt.register(q.token, a) != nil {
		t.Error("another test took a registered address")
	}
	pt.remove(p)
	if pt.lookup(a) != nil {
		t.Error("a removed test still answered")
	}
}

// TestIdleTimeout: idle connections are closed (a TCP test without
// requests, a UDP test without datagrams); a UDP test whose datagrams keep
// coming outlives the timeout.
func TestIdleTimeout(t *testing.T) {
	addr, _ := startServerWith(t, 300*time.Millisecond, 0)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var hb [helloLen]byte
	hello{0, 1, 1}.put(hb[:])
	c.Write(hb[:])
	_, ctl := openUDPTest(t, addr, 1, 1)
	for _, conn := range []net.Conn{c, ctl} {
		start := time.Now()
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := conn.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("idle connection: %d bytes, %v; want it closed", n, err)
		}
		t.Logf("idle connection closed after %s", time.Since(start).Round(time.Millisecond))
	}
	res, err := Run(context.Background(), Config{Addr: addr, Protocol: ProtocolUDP, Duration: time.Second, Timeout: 200 * time.Millisecond}, nil)
	if err != nil || res.Transactions == 0 || res.Lost > res.Transactions/10 {
		t.Fatalf("udp test longer than the idle timeout: %d transactions, %d lost, %v", res.Transactions, res.Lost, err)
	}
}

// TestConnectionCap: connections beyond MaxConns are closed at once and the
// server's memory stays bounded; it serves again when they are gone.
func TestConnectionCap(t *testing.T) {
	const max = 200
	addr, _ := startServerWith(t, 0, max)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var hb [helloLen]byte
	hello{0, descriptors.RRMaxTCPSize, descriptors.RRMaxTCPSize}.put(hb[:])
	for range max {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(hb[:]) // then idle, mid-request
		conns = append(conns, c)
	}
	// The server is reading them all: the next one is closed at once (a
	// probe that sends its hello, so the listener does not wait for its
	// first data).
	var last error
	if err := poll.Until(context.Background(), 5*time.Second, time.Millisecond, func() (bool, error) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false, err
		}
		defer c.Close()
		c.Write(hb[:])
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, last = c.Read(make([]byte, 1))
		return last == io.EOF || errors.Is(last, syscall.ECONNRESET), nil
	}); err != nil {
		t.Fatalf("%s never refused a connection over its cap: %v (last read: %v)", addr, err, last)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("%d idle connections of 16 MiB requests: heap in use %.1f -> %.1f MB", max, float64(m0.HeapInuse)/1e6, float64(m1.HeapInuse)/1e6)
	if m1.HeapInuse > m0.HeapInuse+32<<20 {
		t.Errorf("heap in use grew from %d to %d", m0.HeapInuse, m1.HeapInuse)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	var err error
	for try := 0; try < 50; try++ {
		var res Result
		if res, err = Run(context.Background(), Config{Addr: addr, Duration: 200 * time.Millisecond}, nil); err == nil && res.Transactions > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal(err)
}

// FuzzHello: any 16 bytes either parse into sizes within the limits of
// their kind of test, or are refused.
func FuzzHello(f *testing.F) {
	for _, h := range []hello{{0, 1, 1}, {flagOnce, 100, descriptors.RRMaxTCPSize}, {flagUDP, 4, descriptors.MaxUDPPayload}, {flagUDP, 1, descriptors.MaxUDPPayload + 1}, {3, 1, 1}, {0, 0, 1}} {
		b := make([]byte, helloLen)
		h.put(b)
		f.Add(b)
	}
	f.Add([]byte("GET / HTTP/1.0\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHello(b)
		if err != nil {
			if bytes.ContainsAny([]byte(err.Error()), "\n\r") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		max := uint32(descriptors.RRMaxTCPSize)
		if h.flags&flagUDP != 0 {
			max = descriptors.MaxUDPPayload
		}
		if h.req < 1 || h.resp < 1 || h.req > max || h.resp > max || h.flags&^(flagOnce|flagUDP) != 0 || h.flags == flagOnce|flagUDP {
			t.Fatalf("accepted %+v", h)
		}
	})
}

// FuzzDatagram: whatever datagram arrives, from a registered test's address
// or another, the server answers at most what the test asked for, and a
// stranger at most the echo of a registration (which then fails: wrong IP
// or token).
func FuzzDatagram(f *testing.F) {
	reg := make([]byte, regLen)
	putReg(reg, [tokenLen]byte{1})
	f.Add([]byte{0, 0, 0xff, 0xe3}, true)
	f.Add(reg, false)
	f.Add(reg, true)
	f.Add(make([]byte, 100), true)
	f.Fuzz(func(t *testing.T, d []byte, fromTest bool) {
		s := &Server{}
		p := &udpPeer{token: [tokenLen]byte{1}, ip: netip.MustParseAddr("127.0.0.1"), req: 100, resp: 200}
		s.peers.add(p)
		test := netip.MustParseAddrPort("127.0.0.1:4000")
		if s.peers.register(p.token, test) == nil {
			t.Fatal("registration failed")
		}
		from := netip.MustParseAddrPort("192.0.2.9:4000")
		if fromTest {
			from = test
		}
		out := make([]byte, descriptors.MaxUDPPayload)
		n := s.answer(d, from, out)
		switch {
		case !fromTest && n != 0:
			t.Fatalf("a stranger got %d bytes for %d", n, len(d))
		case fromTest && n != 0 && n != p.resp && !(n == len(d) && n == regLen):
			t.Fatalf("the test got %d bytes for %d", n, len(d))
		case fromTest && n == p.resp && len(d) != p.req:
			t.Fatalf("answered a %d-byte datagram; the test's requests have %d", len(d), p.req)
		}
	})
}

// FuzzFirstData: whatever a client sends on a new connection before it
// closes its side, the server answers no more than the hello asked for:
// nothing without a valid hello, a token for a UDP test, one response for
// crr with its request all in, one response per whole request for rr. The
// hot listener's inline read and its hand-over (preread) are on this path.
func FuzzFirstData(f *testing.F) {
	addr := startServer(f)
	withHello := func(h hello, rest int) []byte {
		b := make([]byte, helloLen+rest)
		h.put(b)
		return b
	}
	f.Add(withHello(hello{flagOnce, 14, 14}, 14))
	f.Add(withHello(hello{flagOnce, 14, 14}, 20))
	f.Add(withHello(hello{flagOnce, 14, 14}, 5))
	f.Add(withHello(hello{flagOnce, maxInline + 1, 3}, maxInline+1))
	f.Add(withHello(hello{0, 5, 7}, 12))
	f.Add(withHello(hello{flagUDP, 4, 4}, 1))
	f.Add(withHello(hello{0, 5, 7}, 0)[:9])
	f.Add([]byte("GET / HTTP/1.0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		max := 0
		if h, err := parseHello(in); err == nil {
			rest := len(in) - helloLen
			switch {
			case h.flags&flagUDP != 0:
				max = tokenLen
			case h.flags&flagOnce != 0 && rest >= int(h.req):
				max = int(h.resp)
			case h.flags&flagOnce == 0:
				max = rest / int(h.req) * int(h.resp)
			}
		}
		if max > 1<<20 {
			return // a large answer: slow to read, and bounded by the hello all the same
		}
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(in); err != nil {
			t.Fatal(err)
		}
		_ = c.(*net.TCPConn).CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _ := io.Copy(io.Discard, io.LimitReader(c, int64(max)+1))
		if n > int64(max) {
			t.Fatalf("answered more than %d bytes to %d bytes of first data", max, len(in))
		}
	})
}
