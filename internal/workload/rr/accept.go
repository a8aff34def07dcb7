package rr

import (
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"golang.org/x/sys/unix"
)

// hotListener accepts on the hot path (hot.go): blocking accept4 calls on
// a duplicate of the listening socket, out of Go's netpoller, so a
// connection wakes this thread and no other, as netserver's accept does.
// A crr transaction, whose hello and request come in the first segment,
// is answered inline: read, write, close, with no goroutine, no epoll
// registration and no timer. Every other connection becomes a net.Conn
// for serveConn.
//
// The listener accepts once the handshake is done, not once data is in
// (TCP_DEFER_ACCEPT, tried): waking it then overlaps the wake-up of its
// CPU with the client's sending of the request. Deferred, that wake-up
// came after the request, on the critical path: crr 0.87–0.92 of netperf
// TCP_CRR's transactions/s against 0.99–1.10 not deferred (bare lab,
// Xeon, 3 s rounds).
type hotListener struct {
	s        *Server
	fd       int
	buf      []byte // helloLen + maxInline
	nonblock bool   // fd is in non-blocking mode (the server is quiet)
}

// serverWait bounds the server's blocking waits for the next connection
// (accept) or datagram (serveUDP), with SO_RCVTIMEO; the server's stop
// wakes them at once (it shuts the socket down). Long, because each time
// a thread blocks and stays, sysmon takes its P and restarts its own
// 20 µs polling, which lands on the CPU the hot threads answer on (4
// times a second with a 250 ms wait).
const serverWait = 10 * time.Second

// maxInline bounds the requests and responses answered inline; larger
// crr transactions go to serveConn.
const maxInline = 16 << 10

// firstDataWait bounds how long the accepting thread waits for a new
// connection's first data, to answer it inline; a connection still
// silent by then goes to serveConn, so a silent client delays the next
// accept by this at most. Usually the data is in already: the client
// sends its request right after the handshake, while this thread wakes.
const firstDataWait = 2 * time.Millisecond

// newHotListener takes over ln's socket (ln is closed); false, with ln
// untouched, when it cannot.
func newHotListener(s *Server, ln net.Listener) (*hotListener, bool) {
	fd, err := serverkit.Dup(ln)
	if err != nil {
		return nil, false
	}
	// ln is closed next, so the duplicate's file is this listener's alone.
	tv := unix.NsecToTimeval(int64(serverWait))
	if unix.SetNonblock(fd, false) != nil || unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv) != nil {
		unix.Close(fd)
		return nil, false
	}
	ln.Close()
	return &hotListener{s: s, fd: fd, buf: make([]byte, helloLen+maxInline)}, true
}

// accept returns the next connection that needs serveConn, answering crr
// transactions inline meanwhile; net.ErrClosed once the server stops.
func (l *hotListener) accept() (net.Conn, error) {
	start := time.Now()
	var y serverkit.Yielder
	for {
		y.Maybe(time.Since(start), yieldEvery)
		// A call that enters the scheduler, unlike the hot path's raw
		// ones: a raw accept would hold the P through a stop of the
		// world, and the kernel restarts it after each preemption signal.
		// One blocking accept per connection, where waiting in poll took
		// an accept that failed, a poll and a second accept.
		//
		// While hot threads hold every P (Server.wantProcs), no blocking:
		// a look for a connection between their yields.
		quiet := l.s.quiet.Load()
		if quiet != l.nonblock {
			if err := unix.SetNonblock(l.fd, quiet); err != nil {
				return nil, os.NewSyscallError("fcntl", err)
			}
			l.nonblock = quiet
		}
		var (
			nfd uintptr
			e   syscall.Errno
		)
		if quiet {
			nfd, _, e = syscall.RawSyscall6(syscall.SYS_ACCEPT4, uintptr(l.fd), 0, 0, syscall.SOCK_CLOEXEC, 0, 0)
			if e == syscall.EAGAIN {
				if l.s.stopping.Load() {
					return nil, net.ErrClosed
				}
				time.Sleep(quietPoll)
				continue
			}
		} else {
			nfd, _, e = syscall.Syscall6(syscall.SYS_ACCEPT4, uintptr(l.fd), 0, 0, syscall.SOCK_CLOEXEC, 0, 0)
		}
		switch e {
		case 0:
		case syscall.EAGAIN: // serverWait passed
			if l.s.stopping.Load() {
				return nil, net.ErrClosed
			}
			continue
		case syscall.EINTR, syscall.ECONNABORTED:
			continue
		case syscall.EINVAL: // shut down: the server stops
			return nil, net.ErrClosed
		default:
			return nil, os.NewSyscallError("accept4", e)
		}
		if l.s.stopping.Load() {
			syscall.Close(int(nfd))
			return nil, net.ErrClosed
		}
		done, taken := l.inline(int(nfd))
		if done {
			continue
		}
		c, err := fdConn(int(nfd))
		if err != nil {
			continue
		}
		if len(taken) > 0 {
			return &serverkit.Replay{Conn: c, Head: append([]byte(nil), taken...)}, nil
		}
		return c, nil
	}
}

// inline answers a crr transaction whose hello and request are all in,
// and closes it (done). For any other connection it returns what it read
// (taken, in l's buffer), which serveConn reads again first (serverkit.Replay).
// One receive, no peek: netserver's accept, recv, send, close.
func (l *hotListener) inline(fd int) (done bool, taken []byte) {
	buf := l.buf
	n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptrOf(buf), uintptr(len(buf)),
		syscall.MSG_DONTWAIT, 0, 0)
	if e == syscall.EAGAIN && waitReadable(fd, firstDataWait) {
		n, _, e = syscall.RawSyscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptrOf(buf), uintptr(len(buf)),
			syscall.MSG_DONTWAIT, 0, 0)
	}
	if e != 0 {
		return false, nil
	}
	taken = buf[:n]
	if int(n) < helloLen {
		return false, taken
	}
	h, err := parseHello(buf[:helloLen])
	if err != nil || h.flags != flagOnce || h.req > maxInline || h.resp > maxInline || int(n) < helloLen+int(h.req) {
		return false, taken // not crr, or not all in yet: serveConn waits for the rest
	}
	// MSG_MORE holds the response back until close, which sends it with
	// the FIN in one segment: the client wakes once, for both, where
	// otherwise it reads the response and then waits again for the FIN.
	sent, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(fd), uintptrOf(zeros[:]), uintptr(h.resp),
		syscall.MSG_DONTWAIT|syscall.MSG_NOSIGNAL|unix.MSG_MORE, 0, 0)
	if e == 0 && int(sent) < int(h.resp) || e == syscall.EAGAIN {
		// The send buffer is full (a small one): the rest from a goroutine.
		left := int(h.resp)
		if e == 0 {
			left -= int(sent)
		}
		if c, err := fdConn(fd); err == nil {
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(serverkit.ControlTimeout))
				_ = writeN(c, left)
			}()
		}
		return true, nil
	}
	rawClose(fd) // the server closes first: TIME_WAIT stays here
	return true, nil
}

// waitReadable waits at most d for fd to have data (or an EOF or error to
// read), in a raw ppoll: d is short, well under sysmon's 10 ms, so the P
// stays with this thread. False on a timeout or an interruption.
func waitReadable(fd int, d time.Duration) bool {
	pfd := unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	ts := unix.NsecToTimespec(int64(d))
	k, _, e := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	return e == 0 && k == 1
}

// fdConn makes an accepted socket a net.Conn (on the netpoller); fd is
// closed either way.
func fdConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "")
	defer f.Close()
	return net.FileConn(f)
}

// shutdown wakes a blocked accept (it fails with EINVAL).
func (l *hotListener) shutdown() { _ = syscall.Shutdown(l.fd, syscall.SHUT_RD) }

func (l *hotListener) close() { syscall.Close(l.fd) }
