package stream

import (
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
)

// readTCPStreams reads every TCP stream of a test from one thread with its
// own epoll set (or, when the client sends from several threads, from as
// many, each with its share of the streams and an epoll set of its own), as iperf3's server reads after select: each round reads
// only the streams epoll_wait reports readable, each until a read comes
// back short (at most maxBurst reads of tcpReadBuffer), with raw reads
// (hotcall.go). Reading every stream until EAGAIN instead cost 46 system
// calls per MB received with 4 streams, against 26 this way and 19 for
// iperf3, and 4–8 % more of the receiver's CPU per GB (the sender's
// throughput was the same within noise). A test of one stream is
// read with blocking reads instead (readOne). The
// sockets are dup'ed out of Go's netpoller first (their net.Conns closed),
// so neither the netpoller nor the goroutine scheduler sits in the data
// path. It returns when every stream has ended or deadline() has passed.
// When a socket cannot be taken over, each stream gets a goroutine on the
// netpoller instead.
func (t *test) readTCPStreams(t0 time.Time) {
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
	for _, c := range t.conns {
		c.Close() // leaves Go's netpoller; the dup keeps the connection
	}
	t.mu.Unlock()
	defer func() {
		for _, fd := range fds {
			if fd >= 0 {
				syscall.Close(fd)
			}
		}
	}()

	// With several threads (the client's), each reads its share of the
	// streams, as the client sends them: stream i in share i%threads, on
	// an OS thread of its own, named receiverThread.
	threads := max(1, min(t.cfg.Threads, len(fds)))
	if threads == 1 {
		t.readShare(fds, allStreams(len(fds)), t0)
		return
	}
	shares := make([][]int, threads)
	for i := range fds {
		shares[i%threads] = append(shares[i%threads], i)
	}
	var wg sync.WaitGroup
	for _, share := range shares {
		wg.Go(func() {
			// Never unlocked: the thread, named, ends with the goroutine.
			runtime.LockOSThread()
			nameThread(receiverThread)
			t.readShare(fds, share, t0)
		})
	}
	wg.Wait()
}

// allStreams is 0..n-1.
func allStreams(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// readShare reads the streams share (indices into fds, which it closes and
// sets to -1 as they end) with one epoll set, or, for one stream, with
// blocking reads (readOne).
func (t *test) readShare(fds, share []int, t0 time.Time) {
	buf := make([]byte, tcpReadBuffer)
	if len(share) == 1 {
		t.readOne(fds[share[0]], share[0], buf, t0)
		return
	}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return
	}
	defer syscall.Close(ep)
	for _, i := range share {
		_ = syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fds[i], &syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(i)})
	}
	events := make([]syscall.EpollEvent, len(share))
	end := func(i int) {
		_, _, _ = syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(ep), syscall.EPOLL_CTL_DEL, uintptr(fds[i]), 0, 0, 0)
		syscall.Close(fds[i])
		fds[i] = -1
	}
	var y serverkit.Yielder
	for live := len(share); live > 0; {
		left := time.Until(t.dataDeadline())
		if left <= 0 {
			return
		}
		wait := min(left, yieldEvery)
		// The wait enters the scheduler, as a blocking call must: its P
		// serves other tests' loops meanwhile.
		n, err := syscall.EpollWait(ep, events, int(wait/time.Millisecond)+1)
		if e, _ := err.(syscall.Errno); e != 0 && e != syscall.EINTR {
			return
		}
		for _, ev := range events[:max(n, 0)] {
			i := int(ev.Fd)
			for k := 0; fds[i] >= 0 && k < maxBurst; k++ {
				m, e := rawRead(uintptr(fds[i]), buf)
				if m > 0 {
					r := t.recv[i]
					el := time.Since(t0)
					r.bytes[r.bin(el, t.edges)] += int64(m)
					r.last = el
					if m < len(buf) {
						break // the socket is (most likely) empty
					}
					continue
				}
				if e == syscall.EAGAIN {
					break
				}
				if e == syscall.EINTR {
					continue
				}
				end(i) // m == 0: the end of the stream; or an error
				live--
			}
		}
		y.Maybe(time.Since(t0), yieldEvery)
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

// readOne reads a test's only stream with blocking reads, as iperf3's
// server does after select: the thread sleeps in read and wakes with the
// data, one system call where the epoll loop makes three (the read that
// finds the socket empty, epoll_wait, the read). The reads are raw
// (hotcall.go), on a P the reader is lent for the test (Server.procs):
// a read that entered the scheduler lost its P to sysmon each time it
// waited over 20 µs on a one-CPU server. Measured side by side, one
// stream, server CPU per KiB received: 262 ns entering the scheduler, 209
// raw, iperf3 237. A read that ends in a preemption signal (sysmon's, after
// 10 ms blocked) or the 50 ms timeout finds the stream idle; the next one
// then enters the scheduler, so an idle stream's thread sleeps.
func (t *test) readOne(fd, stream int, buf []byte, t0 time.Time) {
	if syscall.SetNonblock(fd, false) != nil {
		return
	}
	tv := syscall.NsecToTimeval(int64(50 * time.Millisecond))
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	if t.procs != nil {
		t.procs.Lend(1)
		defer t.procs.Lend(-1)
	}
	r := t.recv[stream]
	var y serverkit.Yielder
	idle := false
	for time.Now().Before(t.dataDeadline()) {
		n, e := readWait(uintptr(fd), buf, idle)
		el := time.Since(t0)
		switch {
		case n > 0:
			r.bytes[r.bin(el, t.edges)] += int64(n)
			r.last = el
			idle = false
		case e == syscall.EAGAIN || e == syscall.EINTR:
			idle = true
		default:
			return // the end of the stream, or an error
		}
		y.Maybe(el, yieldEvery)
	}
}
