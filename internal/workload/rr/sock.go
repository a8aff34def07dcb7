package rr

import (
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// sock is one connection of the client or the server. A kernel socket is
// detached from Go's netpoller: the sock keeps a duplicate of its
// descriptor, in blocking mode, and closes the net.Conn, which takes the
// socket out of the runtime's epoll set. Left there, every segment that
// arrives would also wake a runtime thread blocked in epoll_wait, for
// nothing: three context switches per transaction where sockperf has one.
// The hot path (hot.go) then makes its system calls on fd. Other conns (a
// custom Dial's) stay conns and go through Read and Write.
type sock struct {
	c   net.Conn // nil once detached
	fd  int      // the detached descriptor; -1 for a conn
	ctl net.Conn // udp: the test's control connection, closed with the sock

	mu     sync.Mutex // fd against a shutdown after close
	closed bool
}

// blockTimeout bounds one blocking call (SO_RCVTIMEO, SO_SNDTIMEO): how
// long a stop, or the garbage collector's stop of the world, can wait
// for a worker blocked in a raw system call.
const blockTimeout = 250 * time.Millisecond

// newSock detaches c when it is a kernel socket; it returns c as a conn
// otherwise (or if the descriptor cannot be duplicated).
func newSock(c net.Conn) *sock {
	fd, err := serverkit.Dup(c)
	if err != nil {
		return &sock{c: c, fd: -1}
	}
	if err := setBlocking(fd); err != nil {
		syscall.Close(fd)
		return &sock{c: c, fd: -1}
	}
	c.Close()
	return &sock{fd: fd}
}

// setBlocking puts fd in blocking mode, each call waiting at most
// blockTimeout.
func setBlocking(fd int) error {
	if err := syscall.SetNonblock(fd, false); err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	tv := syscall.NsecToTimeval(int64(blockTimeout))
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	return nil
}

// detached reports whether s is a descriptor for the hot path.
func (s *sock) detached() bool { return s.fd >= 0 }

// unblock wakes a call in progress on s and fails the later ones.
func (s *sock) unblock() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.detached() {
		_ = syscall.Shutdown(s.fd, syscall.SHUT_RDWR)
		return
	}
	_ = s.c.SetDeadline(time.Unix(1, 0))
}

// reopen makes a closed detached sock the descriptor fd's, for the next
// crr connection; false, with fd closed, once w is stopped. Checked under
// mu: a stop either sees fd (and shuts it down) or is seen here.
func (s *sock) reopen(fd int, w *worker) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.isStopped() {
		rawClose(fd)
		return false
	}
	s.fd, s.closed = fd, false
	return true
}

// close closes the connection and, udp, its control connection.
func (s *sock) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		if s.detached() {
			rawClose(s.fd)
		} else {
			s.c.Close()
		}
	}
	s.mu.Unlock()
	if s.ctl != nil {
		s.ctl.Close()
	}
}

// The conn path, for conns that are not kernel sockets.

// readN reads exactly n bytes of c through buf.
func readN(c net.Conn, buf []byte, n int) error {
	for n > 0 {
		k := min(n, len(buf))
		if _, err := io.ReadFull(c, buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// writeN writes n zero bytes to c.
func writeN(c net.Conn, n int) error {
	for n > 0 {
		k := min(n, len(zeros))
		if _, err := c.Write(zeros[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
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

// recvWait is how recvfrom waits for a datagram.
type recvWait int

const (
	rawWait  recvWait = iota // a raw blocking call: the thread keeps its P
	idleWait                 // a blocking call that enters the scheduler (see hotIO.read)
	noWait                   // none: EAGAIN if no datagram is queued
)

// recvfrom and sendto without allocating a sockaddr per datagram and,
// but for idleWait, without entering the scheduler (hot.go).
func recvfrom(fd uintptr, p []byte, from *syscall.RawSockaddrAny, fromLen *uint32, w recvWait) (int, syscall.Errno) {
	*fromLen = syscall.SizeofSockaddrAny
	// Direct calls each: the pointers are kept alive only in a
	// system call's own argument list.
	if w == idleWait {
		n, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0,
			uintptr(unsafe.Pointer(from)), uintptr(unsafe.Pointer(fromLen)))
		return int(n), e
	}
	flags := uintptr(0)
	if w == noWait {
		flags = syscall.MSG_DONTWAIT
	}
	n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), flags,
		uintptr(unsafe.Pointer(from)), uintptr(unsafe.Pointer(fromLen)))
	return int(n), e
}

func sendto(fd uintptr, p []byte, to *syscall.RawSockaddrAny, toLen uint32) syscall.Errno {
	_, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0,
		uintptr(unsafe.Pointer(to)), uintptr(toLen))
	return e
}

// readTCPInfo adds s's TCP_INFO to a: its descriptor, or a conn's socket.
func readTCPInfo(a *tcpinfo.Acc, s *sock) bool {
	if s == nil {
		return false
	}
	if s.detached() {
		return a.ReadFd(s.fd)
	}
	return a.ReadConn(s.c)
}
