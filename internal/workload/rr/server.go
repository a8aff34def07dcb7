package rr

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

const (
	helloLen   = 16
	helloMagic = 0x636e5252 // "cnRR"
	flagOnce   = 1          // crr: close after the first response
	flagUDP    = 2          // udp: this connection opens a UDP test (see rr.go)
	chunk      = 64 << 10   // read buffer size
	tokenLen   = 8
	regMagic   = 0x636e5255 // "cnRU"
	regLen     = 4 + tokenLen
	// DefaultIdleTimeout ends a connection on which nothing arrived for
	// that long (for a UDP test's control connection: no datagram).
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxConns bounds the connections served at once; beyond it, a
	// new connection is closed at once.
	DefaultMaxConns = 2 * descriptors.RRMaxParallel
)

// zeros is the (never written) payload of every request and response.
var zeros [1 << 20]byte

type hello struct {
	flags, req, resp uint32
}

func (h hello) put(b []byte) {
	binary.BigEndian.PutUint32(b[0:], helloMagic)
	binary.BigEndian.PutUint32(b[4:], h.flags)
	binary.BigEndian.PutUint32(b[8:], h.req)
	binary.BigEndian.PutUint32(b[12:], h.resp)
}

func parseHello(b []byte) (hello, error) {
	if len(b) < helloLen || binary.BigEndian.Uint32(b) != helloMagic {
		return hello{}, errors.New("not an rr client (bad magic)")
	}
	h := hello{binary.BigEndian.Uint32(b[4:]), binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:])}
	max := uint32(descriptors.RRMaxTCPSize)
	switch h.flags {
	case 0, flagOnce:
	case flagUDP:
		max = descriptors.MaxUDPPayload
	default:
		return hello{}, fmt.Errorf("unknown flags %#x", h.flags)
	}
	if h.req < 1 || h.req > max || h.resp < 1 || h.resp > max {
		return hello{}, fmt.Errorf("sizes %d/%d out of 1..%d", h.req, h.resp, max)
	}
	return h, nil
}

// putReg writes a UDP registration datagram: regMagic and the token.
func putReg(b []byte, token [tokenLen]byte) {
	binary.BigEndian.PutUint32(b, regMagic)
	copy(b[4:], token[:])
}

// parseReg reads a registration datagram's token.
func parseReg(b []byte) (token [tokenLen]byte, ok bool) {
	if len(b) != regLen || binary.BigEndian.Uint32(b) != regMagic {
		return token, false
	}
	copy(token[:], b[4:])
	return token, true
}

// Server is an rr server: a TCP listener and a UDP socket on one port.
// Set the exported fields before Serve; zero values take the defaults.
type Server struct {
	// IdleTimeout ends a connection idle for that long.
	IdleTimeout time.Duration
	// MaxConns bounds the connections served at once.
	MaxConns int

	ln       net.Listener
	addr     string // ln's, which is closed once a hotListener takes it over
	udp      *net.UDPConn
	logf     func(format string, a ...any)
	stopping atomic.Bool
	hot      atomic.Int32 // rr connections on the hot path
	hotMu    sync.Mutex
	hotSocks map[*sock]struct{} // every detached socket, for stop to unblock
	udpTests int                // open UDP tests (under hotMu)
	// procs lends a P to each hot TCP socket, and one to the UDP socket
	// while a UDP test is open (wantProcs).
	procs serverkit.Procs
	// quiet is set while hot threads hold every P (procs): the accept
	// loop and an idle UDP socket then poll instead of blocking.
	quiet atomic.Bool
	// udpOpen is set while a UDP test is open: the UDP socket's thread
	// then holds a P of its own, in raw calls.
	udpOpen atomic.Bool
	peers   peerTable
}

// udpPeer is a UDP test opened over a control connection: the server
// answers datagrams from addr (learnt from a registration datagram that
// carried token and came from the control connection's IP) with resp
// bytes, if they hold exactly req bytes.
type udpPeer struct {
	token     [tokenLen]byte
	ip        netip.Addr
	req, resp int
	addr      netip.AddrPort // the registered UDP source; zero before
	seen      atomic.Uint64  // datagrams answered
}

// peerTable holds the UDP tests, by token and by registered address.
type peerTable struct {
	mu      sync.RWMutex
	byToken map[[tokenLen]byte]*udpPeer
	byAddr  map[netip.AddrPort]*udpPeer
}

func (t *peerTable) add(p *udpPeer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byToken == nil {
		t.byToken = map[[tokenLen]byte]*udpPeer{}
		t.byAddr = map[netip.AddrPort]*udpPeer{}
	}
	if _, dup := t.byToken[p.token]; dup {
		return false
	}
	t.byToken[p.token] = p
	return true
}

func (t *peerTable) remove(p *udpPeer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byToken, p.token)
	if p.addr.IsValid() && t.byAddr[p.addr] == p {
		delete(t.byAddr, p.addr)
	}
}

// lookup is the test datagrams from a belong to; nil if none.
func (t *peerTable) lookup(a netip.AddrPort) *udpPeer {
	t.mu.RLock()
	p := t.byAddr[a]
	t.mu.RUnlock()
	return p
}

// register binds the test of token to source address a, if a has the IP
// of the test's control connection; it returns the test, or nil.
func (t *peerTable) register(token [tokenLen]byte, a netip.AddrPort) *udpPeer {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.byToken[token]
	if p == nil || p.ip != a.Addr() {
		return nil
	}
	if q := t.byAddr[a]; q != nil && q != p {
		return nil // another test's address
	}
	if p.addr.IsValid() && p.addr != a {
		delete(t.byAddr, p.addr) // the client's address changed (NAT)
	}
	p.addr = a
	t.byAddr[a] = p
	return p
}

// Listen opens the TCP listener and the UDP socket on addr (port 0: a free
// port, the same for both); an address without a port gets descriptors.RRPort.
func Listen(addr string) (*Server, error) {
	addr = cmp.Or(addr, "127.0.0.1:"+strconv.Itoa(descriptors.RRPort))
	addr = serverkit.WithPort(addr, descriptors.RRPort)
	ln, uc, err := serverkit.ListenPair(addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, udp: uc, addr: ln.Addr().String()}
	s.procs.Want = s.wantProcs
	return s, nil
}

// Addr is the address the server listens on (TCP and UDP).
func (s *Server) Addr() string { return s.addr }

// Serve answers clients until ctx is done, then closes every socket. A
// client that vanishes or misbehaves loses its connection; the server goes on.
func (s *Server) Serve(ctx context.Context, log io.Writer) error {
	s.logf = serverkit.Logger(log, "cnperf rr: ")
	gate := serverkit.NewGate(serverkit.OrDefault(s.MaxConns, DefaultMaxConns))
	defer s.procs.Start()()
	accept := s.ln.Accept
	hl, ok := newHotListener(s, s.ln)
	if ok {
		defer hl.close()
		accept = hl.accept
	}
	stop := context.AfterFunc(ctx, func() {
		s.stopping.Store(true)
		s.unblockHot()
		s.ln.Close()
		if hl != nil {
			hl.shutdown()
		}
		unblockConn(s.udp)
	})
	defer stop()

	udpErr := make(chan error, 1)
	go func() { udpErr <- s.serveUDP() }()

	err := gate.Serve(ctx, accept, s.logf, "connections", func(conns context.Context, c net.Conn) {
		// conns ends with the server: its end unblocks every connection.
		defer context.AfterFunc(conns, func() { unblockConn(c) })()
		s.serveConn(c)
	}, nil)
	s.ln.Close()
	s.udp.Close()
	uerr := <-udpErr
	if ctx.Err() != nil {
		return nil
	}
	if err == nil {
		err = uerr
	}
	return err
}

func (s *Server) idle() time.Duration { return serverkit.OrDefault(s.IdleTimeout, DefaultIdleTimeout) }

// serveConn answers one TCP connection until the client closes it (or, crr,
// after one response, or it is idle for the idle timeout). A UDP test's
// control connection goes to serveUDPTest.
func (s *Server) serveConn(c net.Conn) {
	defer c.Close()
	kc := c // the kernel socket's conn
	if p, ok := c.(*serverkit.Replay); ok {
		kc = p.Conn
	}
	if tc, ok := kc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	var hb [helloLen]byte
	_ = c.SetReadDeadline(time.Now().Add(serverkit.ControlTimeout))
	if _, err := io.ReadFull(c, hb[:]); err != nil {
		return // a port scan or a client gone before its hello
	}
	h, err := parseHello(hb[:])
	if err != nil {
		s.logf("%s: %v", c.RemoteAddr(), err)
		return
	}
	if h.flags&flagUDP != 0 {
		s.serveUDPTest(c, h)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if h.flags&flagOnce == 0 {
		if n := s.hot.Add(1); n <= maxHot {
			defer s.hot.Add(-1)
			in := 0 // request bytes the hot listener read
			if p, ok := c.(*serverkit.Replay); ok {
				in = len(p.Head)
			}
			if sk := newSock(kc); sk.detached() {
				s.serveHot(sk, h, in)
				return
			}
		} else {
			s.hot.Add(-1)
		}
	}
	// crr, and rr beyond maxHot: on the netpoller. A crr connection lives
	// for one transaction, too short to pay for detaching it.
	idle := s.idle()
	buf := make([]byte, min(int(h.req), chunk))
	for {
		_ = c.SetDeadline(time.Now().Add(idle))
		if err := readN(c, buf, int(h.req)); err != nil {
			return // EOF: the client is done (or gone, or idle)
		}
		if err := writeN(c, int(h.resp)); err != nil {
			return
		}
		if h.flags&flagOnce != 0 {
			return // crr: close first, so TIME_WAIT stays here
		}
	}
}

// maxHot bounds the connections served on the hot path (hot.go), each
// with a P of its own; the others are served on the netpoller.
const maxHot = 64

// serveHot answers one rr connection on the hot path (hot.go), until the
// client closes it, is idle for the idle timeout or the server stops. The
// first in bytes of requests were read already.
func (s *Server) serveHot(sk *sock, h hello, in int) {
	if !s.addHot(sk, true) {
		sk.close()
		return
	}
	defer s.removeHot(sk, true)
	req, resp := int(h.req), int(h.resp)
	buf := make([]byte, min(req, chunk))
	idle := s.idle()
	hio := hotIO{fd: uintptr(sk.fd)}
	start := time.Now()
	var last time.Duration // the last request
	stop := func() bool { return s.stopping.Load() || time.Since(start)-last >= idle }
	var y serverkit.Yielder
	for {
		k := min(in, req)
		in -= k
		if hio.readN(buf, req-k, stop) != 0 {
			return // EOF: the client is done (or gone, or idle)
		}
		last = time.Since(start)
		if hio.writeN(resp, stop) != 0 {
			return
		}
		y.Maybe(last, yieldEvery)
	}
}

// addHot registers a detached socket for the server's stop to unblock
// and, tcp, gives it a P of its own (procs). False if the server is
// stopping.
func (s *Server) addHot(sk *sock, tcp bool) bool {
	s.hotMu.Lock()
	defer s.hotMu.Unlock()
	if s.stopping.Load() {
		return false
	}
	if s.hotSocks == nil {
		s.hotSocks = map[*sock]struct{}{}
	}
	s.hotSocks[sk] = struct{}{}
	if tcp {
		s.procs.Lend(1)
	}
	return true
}

// removeHot closes a socket addHot registered and gives its P back.
func (s *Server) removeHot(sk *sock, tcp bool) {
	s.hotMu.Lock()
	delete(s.hotSocks, sk)
	if tcp {
		s.procs.Lend(-1)
	}
	s.hotMu.Unlock()
	sk.close()
}

// udpTest counts a UDP test opening (+1) or closing (-1): while one is
// open, the UDP socket's thread holds a P (procs).
func (s *Server) udpTest(d int) {
	s.hotMu.Lock()
	defer s.hotMu.Unlock()
	s.udpTests += d
	if open := s.udpTests > 0; open != s.udpOpen.Load() {
		s.udpOpen.Store(open)
		s.procs.Lend(d)
	}
}

// wantProcs is GOMAXPROCS with held Ps lent (procs). While rr tests run on the hot
// path: one P per hot TCP socket, and one for the UDP socket while a UDP
// test is open, and not one more. A hot thread yields every yieldEvery,
// and with an idle P each yield woke another thread on the CPU the hot
// threads answer on (busy-polled TCP rr, 10 rounds: p99 1.15x and p99.9
// 2.1x sockperf's with the spare P, 1.05x and 1.01x without). The rest of
// the server then runs in the hot threads' yields and does not block
// (quiet): a goroutine blocked in a system call on a hot thread's P would
// hold it until sysmon took it back, 10-20 ms.
//
// With no hot thread: what the process had when Serve began, and at
// least 2. The accept thread waits in a call that enters the scheduler;
// with no idle P sysmon takes its P at every wait (crr: 5.4-8.7 context
// switches per transaction on the server's CPU, against 2.3-2.6).
func (s *Server) wantProcs(held, base int) int {
	s.quiet.Store(held > 0)
	if held > 0 {
		return held
	}
	return max(base, 2)
}

// quietPoll is how often the accept loop and an idle UDP socket look for
// work while the server is quiet: the hot threads' yields run them.
const quietPoll = yieldEvery

// unblockHot wakes every hot socket's blocking call.
func (s *Server) unblockHot() {
	s.hotMu.Lock()
	defer s.hotMu.Unlock()
	for sk := range s.hotSocks {
		sk.unblock()
	}
}

// serveUDPTest keeps a UDP test open while its control connection c is:
// it gives the client a token, which the client's UDP socket sends back
// in a registration datagram from c's IP address; the server then answers
// that socket's requests. The test ends when c closes, sends anything, or
// no datagram arrived for the idle timeout.
func (s *Server) serveUDPTest(c net.Conn, h hello) {
	ta, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return
	}
	p := &udpPeer{ip: ta.AddrPort().Addr().Unmap().WithZone(""), req: int(h.req), resp: int(h.resp)}
	for {
		if _, err := rand.Read(p.token[:]); err != nil {
			return
		}
		if s.peers.add(p) {
			break
		}
	}
	defer s.peers.remove(p)
	s.udpTest(1)
	defer s.udpTest(-1)
	_ = c.SetWriteDeadline(time.Now().Add(serverkit.ControlTimeout))
	if _, err := c.Write(p.token[:]); err != nil {
		return
	}
	idle := s.idle()
	var one [1]byte
	last := p.seen.Load()
	for !s.stopping.Load() {
		_ = c.SetReadDeadline(time.Now().Add(idle))
		_, err := c.Read(one[:])
		var ne net.Error
		if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
			return // closed, or a protocol error
		}
		if n := p.seen.Load(); n != last {
			last = n
			continue
		}
		return // idle
	}
}

// answer decides what datagram in from a gets: it writes the answer into
// out and returns its size, 0 for none. Only a test opened over a control
// connection is answered, from the address it registered, with the size it
// asked for; a registration is answered with its echo.
func (s *Server) answer(in []byte, a netip.AddrPort, out []byte) int {
	p := s.peers.lookup(a)
	n := len(in)
	switch token, isReg := parseReg(in); {
	case isReg && (p == nil || p.token == token):
		if s.peers.register(token, a) != nil {
			return copy(out, in)
		}
	case p != nil && n == p.req:
		copy(out[:min(8, n, p.resp)], in)
		p.seen.Add(1)
		return p.resp
	}
	return 0
}

// unblockConn shuts c down, waking a blocking call on it, and closes it.
func unblockConn(c net.Conn) {
	serverkit.Control(c, func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
	c.Close()
}

// serveUDP answers every datagram until the server stops, on the hot path
// (hot.go): the socket detached from the netpoller, raw blocking calls.
func (s *Server) serveUDP() error {
	sk := newSock(s.udp)
	if !sk.detached() {
		return fmt.Errorf("udp socket: cannot take it off the netpoller")
	}
	if !s.addHot(sk, false) {
		sk.close()
		return nil
	}
	defer s.removeHot(sk, false)
	fd := uintptr(sk.fd)
	if e := setRecvTimeout(fd, serverWait); e != 0 {
		return fmt.Errorf("udp socket: %w", os.NewSyscallError("setsockopt", e))
	}
	in := make([]byte, descriptors.MaxUDPPayload+1)
	out := make([]byte, descriptors.MaxUDPPayload)
	var from syscall.RawSockaddrAny
	var fromLen uint32
	start := time.Now()
	var y serverkit.Yielder
	wait := rawWait
	for !s.stopping.Load() {
		y.Maybe(time.Since(start), yieldEvery)
		// Raw calls only while a test is open: the thread then holds a P
		// of its own (procs). With none open, a wait that enters the
		// scheduler; or, while hot threads hold every P, a look without
		// waiting, between their yields.
		w := idleWait
		switch {
		case s.udpOpen.Load():
			w = wait
		case s.quiet.Load():
			w = noWait
		}
		n, e := recvfrom(fd, in, &from, &fromLen, w)
		if w == noWait && e == syscall.EAGAIN {
			time.Sleep(quietPoll)
			continue
		}
		// After a preemption signal or a timeout, no test is mid-run:
		// the next wait enters the scheduler (hotIO.read).
		wait = rawWait
		if e == syscall.EINTR || e == syscall.EAGAIN {
			wait = idleWait
		}
		switch {
		case e == syscall.EINTR:
			runtime.Gosched() // the runtime's preemption signal (hotIO.read)
			continue
		case e == syscall.EAGAIN:
			continue
		case e != 0:
			// ICMP errors from earlier replies and the like: go on,
			// without spinning should the error persist.
			time.Sleep(time.Millisecond)
			continue
		case n == 0 && fromLen == 0:
			continue // a shutdown: stopping is set
		}
		a, ok := addrPort(&from)
		if !ok {
			continue
		}
		size := s.answer(in[:n], a, out)
		if size == 0 {
			continue
		}
		for sendto(fd, out[:size], &from, fromLen) == syscall.EINTR {
		}
		clear(out[:regLen]) // nothing of one client's datagram goes to another
	}
	return nil
}
