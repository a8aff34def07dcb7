package rr

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	helloLen     = 16
	helloMagic   = 0x636e5252 // "cnRR"
	flagOnce     = 1          // crr: close after the first response
	helloTimeout = 10 * time.Second
	chunk        = 64 << 10 // read buffer size
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
	if binary.BigEndian.Uint32(b) != helloMagic {
		return hello{}, errors.New("not an rr client (bad magic)")
	}
	h := hello{binary.BigEndian.Uint32(b[4:]), binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:])}
	if h.req < 1 || h.req > MaxTCPSize || h.resp < 1 || h.resp > MaxTCPSize {
		return hello{}, fmt.Errorf("sizes %d/%d out of 1..%d", h.req, h.resp, MaxTCPSize)
	}
	return h, nil
}

// Server is an rr server: a TCP listener and a UDP socket on one port.
type Server struct {
	ln       net.Listener
	udp      *net.UDPConn
	log      io.Writer
	stopping atomic.Bool
	blocking atomic.Int32 // connections served with blocking system calls
}

// maxBlocking bounds the connections served with blocking system calls
// (each holds a thread while it waits); the others use the netpoller.
const maxBlocking = 1024

// Listen opens the TCP listener and the UDP socket on addr (port 0: a free
// port, the same for both); an address without a port gets 5202.
func Listen(addr string) (*Server, error) {
	if addr == "" {
		addr = ":" + DefaultPort
	}
	addr = WithDefaultPort(addr)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen on tcp %s: %w", addr, err)
		}
		p := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		ua, err := net.ResolveUDPAddr("udp", net.JoinHostPort(host, p))
		if err != nil {
			ln.Close()
			return nil, err
		}
		uc, err := net.ListenUDP("udp", ua)
		if err != nil {
			ln.Close()
			if port == "0" && try < 10 { // that port is taken for UDP: another
				continue
			}
			return nil, fmt.Errorf("listen on udp %s: %w", ua, err)
		}
		return &Server{ln: ln, udp: uc}, nil
	}
}

// Addr is the address the server listens on (TCP and UDP).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve runs the rr server on addr (default port 5202) until ctx is done,
// logging bad clients to log. It returns nil when ctx ends it.
func Serve(ctx context.Context, addr string, log io.Writer) error {
	s, err := Listen(addr)
	if err != nil {
		return err
	}
	if log != nil {
		fmt.Fprintf(log, "cnperf rr: listening on %s (tcp and udp)\n", s.Addr())
	}
	return s.Serve(ctx, log)
}

// Serve answers clients until ctx is done, then closes every socket. A
// client that vanishes or misbehaves loses its connection; the server goes on.
func (s *Server) Serve(ctx context.Context, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	s.log = log
	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		done  bool
		wg    sync.WaitGroup
	)
	stop := context.AfterFunc(ctx, func() {
		s.stopping.Store(true)
		mu.Lock()
		done = true
		for c := range conns {
			unblockConn(c)
		}
		mu.Unlock()
		s.ln.Close()
		unblockConn(s.udp)
	})
	defer stop()

	udpErr := make(chan error, 1)
	go func() { udpErr <- s.serveUDP() }()

	var err error
	delay := 5 * time.Millisecond
	for {
		c, aerr := s.ln.Accept()
		if aerr != nil {
			if ctx.Err() != nil {
				break
			}
			if errors.Is(aerr, net.ErrClosed) {
				err = aerr
				break
			}
			// Out of descriptors and the like: back off and go on.
			fmt.Fprintf(log, "cnperf rr: accept: %v\n", aerr)
			time.Sleep(delay)
			delay = min(2*delay, time.Second)
			continue
		}
		delay = 5 * time.Millisecond
		mu.Lock()
		if done {
			mu.Unlock()
			c.Close()
			continue
		}
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveConn(c)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
	s.ln.Close()
	s.udp.Close()
	uerr := <-udpErr
	mu.Lock()
	for c := range conns {
		unblockConn(c)
	}
	mu.Unlock()
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	if err == nil {
		err = uerr
	}
	return err
}

// serveConn answers one TCP connection until the client closes it (or, crr,
// after one response).
func (s *Server) serveConn(c net.Conn) {
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	var hb [helloLen]byte
	_ = c.SetReadDeadline(time.Now().Add(helloTimeout))
	if _, err := io.ReadFull(c, hb[:]); err != nil {
		return // a port scan or a client gone before its hello
	}
	h, err := parseHello(hb[:])
	if err != nil {
		fmt.Fprintf(s.log, "cnperf rr: %s: %v\n", c.RemoteAddr(), err)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	n := s.blocking.Add(1)
	defer s.blocking.Add(-1)
	sk := newSock(c, n <= maxBlocking)
	buf := make([]byte, min(int(h.req), chunk))
	stop := s.stopping.Load
	for {
		if err := sk.readN(buf, int(h.req), stop); err != nil {
			return // EOF: the client is done (or gone)
		}
		if err := sk.writeN(int(h.resp), stop); err != nil {
			return
		}
		if h.flags&flagOnce != 0 {
			return // crr: close first, so TIME_WAIT stays here
		}
	}
}

// unblockConn shuts c down, waking a blocking call on it, and closes it.
func unblockConn(c net.Conn) {
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
		}
	}
	c.Close()
}

// serveUDP answers every datagram until the socket is closed, with
// blocking system calls (see sock).
func (s *Server) serveUDP() error {
	rc, err := s.udp.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		tv := syscall.NsecToTimeval(int64(blockTimeout))
		if serr = syscall.SetsockoptTimeval(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); serr == nil {
			serr = syscall.SetNonblock(int(fd), false)
		}
	}); err != nil || serr != nil {
		return fmt.Errorf("udp socket: %v", errors.Join(err, serr))
	}
	in := make([]byte, MaxUDPSize+1)
	out := make([]byte, MaxUDPSize)
	var from syscall.RawSockaddrAny
	var fromLen uint32
	for !s.stopping.Load() {
		var n int
		var e syscall.Errno
		if err := rc.Read(func(fd uintptr) bool {
			for {
				if n, e = recvfrom(fd, in, &from, &fromLen); e != syscall.EINTR {
					return true
				}
			}
		}); err != nil {
			return nil // closed
		}
		switch {
		case e == syscall.EAGAIN:
			continue
		case e != 0:
			// ICMP errors from earlier replies and the like: go on,
			// without spinning should the error persist.
			time.Sleep(time.Millisecond)
			continue
		}
		size := n
		if n >= 4 {
			size = int(binary.BigEndian.Uint32(in))
		}
		if n == 0 || size < 1 || size > MaxUDPSize {
			continue
		}
		copy(out[:min(8, n, size)], in)
		_ = rc.Write(func(fd uintptr) bool {
			for sendto(fd, out[:size], &from, fromLen) == syscall.EINTR {
			}
			return true
		})
	}
	return nil
}
