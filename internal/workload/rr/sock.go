package rr

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// sock does a connection's reads and writes. For a kernel socket it puts
// the socket in blocking mode and makes plain blocking system calls, so a
// response wakes the waiting thread directly: Go's netpoller (park, epoll,
// wake another thread) would add microseconds to every round trip, far
// beyond the 10 % a loopback rr may differ from sockperf. Deadlines set on
// the conn still stop the next call; shutdown unblocks a call in progress.
// Other conns (a custom Dial's) go through their Read and Write.
type sock struct {
	c   net.Conn
	rc  syscall.RawConn // nil: use c
	ctl net.Conn        // udp: the test's control connection, closed with c

	// One call's arguments and results, so that the callbacks given to rc
	// are bound once, not allocated per call.
	buf             []byte
	n               int
	err             error
	readFn, writeFn func(fd uintptr) bool
}

func (s *sock) doRead(fd uintptr) bool {
	for {
		s.n, s.err = syscall.Read(int(fd), s.buf)
		if s.err != syscall.EINTR {
			return true
		}
	}
}

func (s *sock) doWrite(fd uintptr) bool {
	for {
		s.n, s.err = syscall.Write(int(fd), s.buf)
		if s.err != syscall.EINTR {
			return true
		}
	}
}

// blockTimeout bounds one blocking call of the client, so a missed wake-up
// costs at most this long; calls are retried after it.
const blockTimeout = 250 * time.Millisecond

// newSock wraps c; blocking=false keeps c on the netpoller.
func newSock(c net.Conn, blocking bool) *sock { return newSockTimeout(c, blocking, blockTimeout) }

// newSockTimeout is newSock with blocking calls timing out after timeout.
func newSockTimeout(c net.Conn, blocking bool, timeout time.Duration) *sock {
	s := &sock{c: c}
	if !blocking {
		return s
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return s
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return s
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		tv := syscall.NsecToTimeval(int64(timeout))
		if serr = syscall.SetsockoptTimeval(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); serr != nil {
			return
		}
		if serr = syscall.SetsockoptTimeval(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv); serr != nil {
			return
		}
		serr = syscall.SetNonblock(int(fd), false)
	}); err != nil || serr != nil {
		return s
	}
	s.rc = rc
	s.readFn, s.writeFn = s.doRead, s.doWrite
	return s
}

// errAgain is a blocking call's timeout: retried by readAtLeast and write.
var errAgain = errors.New("again")

// read is one read(2). It returns errAgain after blockTimeout without data,
// io.EOF at the end of the stream (or after shutdown).
func (s *sock) read(p []byte) (int, error) {
	if s.rc == nil {
		return s.c.Read(p)
	}
	s.buf = p
	rerr := s.rc.Read(s.readFn)
	s.buf = nil
	if rerr != nil {
		return 0, rerr // a deadline passed or the conn is closed
	}
	n, err := s.n, s.err
	switch {
	case err == syscall.EAGAIN:
		return 0, errAgain
	case err != nil:
		return 0, os.NewSyscallError("read", err)
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// readFull fills p; stop (if not nil) is checked when a call times out.
func (s *sock) readFull(p []byte, stop func() bool) error {
	for len(p) > 0 {
		n, err := s.read(p)
		if err == errAgain {
			if stop != nil && stop() {
				return os.ErrDeadlineExceeded
			}
			continue
		}
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// write writes all of p.
func (s *sock) write(p []byte, stop func() bool) error {
	if s.rc == nil {
		_, err := s.c.Write(p)
		return err
	}
	for len(p) > 0 {
		s.buf = p
		werr := s.rc.Write(s.writeFn)
		s.buf = nil
		if werr != nil {
			return werr
		}
		n, err := s.n, s.err
		switch {
		case err == syscall.EAGAIN:
			if stop != nil && stop() {
				return os.ErrDeadlineExceeded
			}
			continue
		case err != nil:
			return os.NewSyscallError("write", err)
		}
		p = p[n:]
	}
	return nil
}

// readN reads exactly n bytes through buf.
func (s *sock) readN(buf []byte, n int, stop func() bool) error {
	for n > 0 {
		k := min(n, len(buf))
		if err := s.readFull(buf[:k], stop); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// writeN writes n zero bytes.
func (s *sock) writeN(n int, stop func() bool) error {
	for n > 0 {
		k := min(n, len(zeros))
		if err := s.write(zeros[:k], stop); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// setRecvTimeout sets how long one blocking read waits (udp's timeout).
func (s *sock) setRecvTimeout(d time.Duration) {
	if s.rc == nil {
		return
	}
	_ = s.rc.Control(func(fd uintptr) {
		tv := syscall.NsecToTimeval(int64(d))
		_ = syscall.SetsockoptTimeval(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	})
}

// unblock wakes a blocking call in progress (and fails later ones).
func (s *sock) unblock() {
	_ = s.c.SetDeadline(time.Unix(1, 0))
	if s.rc != nil {
		_ = s.rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
	}
}

// close closes the connection and, udp, its control connection.
func (s *sock) close() {
	s.c.Close()
	if s.ctl != nil {
		s.ctl.Close()
	}
}

// addrPort reads a datagram's source address without allocating.
func addrPort(sa *syscall.RawSockaddrAny) (netip.AddrPort, bool) {
	switch sa.Addr.Family {
	case syscall.AF_INET:
		p := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&p.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom4(p.Addr), port), true
	case syscall.AF_INET6:
		p := (*syscall.RawSockaddrInet6)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&p.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom16(p.Addr).Unmap(), port), true
	}
	return netip.AddrPort{}, false
}

// recvfrom and sendto without allocating a sockaddr per datagram.
func recvfrom(fd uintptr, p []byte, from *syscall.RawSockaddrAny, fromLen *uint32) (int, syscall.Errno) {
	*fromLen = syscall.SizeofSockaddrAny
	n, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0,
		uintptr(unsafe.Pointer(from)), uintptr(unsafe.Pointer(fromLen)))
	return int(n), e
}

func sendto(fd uintptr, p []byte, to *syscall.RawSockaddrAny, toLen uint32) syscall.Errno {
	_, _, e := syscall.Syscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0,
		uintptr(unsafe.Pointer(to)), uintptr(toLen))
	return e
}
