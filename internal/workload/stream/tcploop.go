package stream

import (
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tcpLoop writes every TCP stream of a test from one OS thread with its own
// epoll set, as iperf3 drives its streams from one select loop: one
// non-blocking write(2) per writable stream per round. The sockets are
// dup'ed and their net.Conns closed first, so Go's netpoller does not wake
// for every freed buffer, and the goroutine scheduler stays out of the data
// path (with several streams on one CPU it cost a quarter of the
// throughput).
type tcpLoop struct {
	fds  []int
	ep   int
	stop atomic.Bool
}

// newTCPLoop takes over conns; nil (conns untouched) when one has no file
// descriptor or epoll fails.
func newTCPLoop(conns []net.Conn) *tcpLoop {
	l := &tcpLoop{}
	for _, c := range conns {
		fd, ok := dupFd(c)
		if !ok {
			l.close()
			return nil
		}
		l.fds = append(l.fds, fd)
	}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		l.close()
		return nil
	}
	l.ep = ep
	for i, fd := range l.fds {
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLOUT, Fd: int32(i)}); err != nil {
			l.close()
			return nil
		}
	}
	for _, c := range conns {
		c.Close() // leaves Go's netpoller; the dup keeps the connection
	}
	return l
}

// run writes buf to every stream until end or stop; errs[i] is set when
// stream i fails.
func (l *tcpLoop) run(buf []byte, ctrs []counter, end time.Time, errs []error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	events := make([]syscall.EpollEvent, len(l.fds))
	live := len(l.fds)
	for live > 0 && !l.stop.Load() {
		left := time.Until(end)
		if left <= 0 {
			return
		}
		n, err := syscall.EpollWait(l.ep, events, int(min(left, 50*time.Millisecond)/time.Millisecond)+1)
		if err != nil && err != syscall.EINTR {
			for i := range errs {
				if errs[i] == nil {
					errs[i] = err
				}
			}
			return
		}
		for _, ev := range events[:max(n, 0)] {
			i := int(ev.Fd)
			k, err := syscall.Write(l.fds[i], buf)
			if k > 0 {
				ctrs[i].bytes.Add(int64(k))
			}
			if err != nil && err != syscall.EAGAIN && err != syscall.EINTR {
				errs[i] = err
				_ = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, l.fds[i], nil)
				live--
			}
		}
	}
}

// retransmits reads stream i's retransmitted segments from TCP_INFO.
func (l *tcpLoop) retransmits(i int) (int64, bool) {
	info, err := unix.GetsockoptTCPInfo(l.fds[i], unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0, false
	}
	return int64(info.Total_retrans), true
}

func (l *tcpLoop) close() {
	for _, fd := range l.fds {
		syscall.Close(fd)
	}
	l.fds = nil
	if l.ep > 0 {
		syscall.Close(l.ep)
	}
	l.ep = -1
}

// dupFd duplicates c's socket as a non-blocking, close-on-exec descriptor.
func dupFd(c net.Conn) (int, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd := -1
	_ = rc.Control(func(f uintptr) {
		d, err := unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return
		}
		if syscall.SetNonblock(d, true) != nil {
			syscall.Close(d)
			return
		}
		fd = d
	})
	return fd, fd >= 0
}
