package stream

import (
	"runtime"
	"sync"
	"syscall"
	"time"
)

// readTCPStreams reads every TCP stream of a test from one locked OS thread
// with its own epoll set, one read(2) of tcpReadBuffer per readable stream
// per round, as iperf3's server reads its streams from one select loop. The
// sockets are dup'ed out of Go's netpoller first (their net.Conns closed),
// so neither the netpoller nor the goroutine scheduler sits in the data
// path. It returns when every stream has ended or deadline() has passed.
// When a socket cannot be taken over, each stream gets a goroutine on the
// netpoller instead.
func (t *test) readTCPStreams(t0 time.Time) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		t.readTCPGoroutines(t0)
		return
	}
	defer syscall.Close(ep)
	t.mu.Lock()
	var fds []int
	for _, c := range t.conns {
		fd, ok := dupFd(c)
		if !ok {
			break
		}
		fds = append(fds, fd)
	}
	if len(fds) < len(t.conns) {
		t.mu.Unlock()
		for _, fd := range fds {
			syscall.Close(fd)
		}
		t.readTCPGoroutines(t0)
		return
	}
	for i, c := range t.conns {
		c.Close() // leaves Go's netpoller; the dup keeps the connection
		_ = syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fds[i], &syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(i)})
	}
	t.mu.Unlock()
	defer func() {
		for _, fd := range fds {
			if fd >= 0 {
				syscall.Close(fd)
			}
		}
	}()

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, tcpReadBuffer)
	events := make([]syscall.EpollEvent, len(fds))
	for live := len(fds); live > 0; {
		left := time.Until(t.dataDeadline())
		if left <= 0 {
			return
		}
		n, err := syscall.EpollWait(ep, events, int(min(left, 50*time.Millisecond)/time.Millisecond)+1)
		if err != nil && err != syscall.EINTR {
			return
		}
		for _, ev := range events[:max(n, 0)] {
			i := int(ev.Fd)
			k, err := syscall.Read(fds[i], buf)
			if k > 0 {
				r := t.recv[i]
				el := time.Since(t0)
				r.bytes[r.bin(el, t.edges)] += int64(k)
				r.last = el
			}
			if k == 0 || (err != nil && err != syscall.EAGAIN && err != syscall.EINTR) {
				_ = syscall.EpollCtl(ep, syscall.EPOLL_CTL_DEL, fds[i], nil)
				syscall.Close(fds[i])
				fds[i] = -1
				live--
			}
		}
	}
}

// readTCPGoroutines reads each stream in its own goroutine.
func (t *test) readTCPGoroutines(t0 time.Time) {
	var wg sync.WaitGroup
	for i, conn := range t.conns {
		r := t.recv[i]
		wg.Go(func() { r.readTCP(conn, t0, t.edges) })
	}
	wg.Wait()
}
