package rr

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// The hot path: a worker's transactions on a detached socket (sock.go),
// with system calls made straight on the descriptor. Go's scheduler is not
// entered on the way: RawSyscall keeps the goroutine on its thread and P
// while the call blocks, so nothing hands the P off and nothing has to win
// it back after; between the response's arrival and the next request, the
// thread does what sockperf's or netperf's does.
//
// The client runs with exactly one P per worker (Run), so a P never idles:
// an idle P is what makes every yield wake another thread. Each worker
// yields every yieldEvery, between transactions, so timers and the
// reporter run and sysmon sees the P reschedule (it would otherwise signal
// the thread every 10 ms to preempt it). The goroutine is not locked to
// its thread: a locked goroutine's yield hands the P to another thread and
// back, and measured, cost 4× the context switches and 80× the futex calls
// of an unlocked one (perf stat, 2 s of busy-polled rr). The loops
// allocate nothing, so no garbage collection has to stop them; one that
// does waits at most blockTimeout.
//
// With busy polling the socket is non-blocking and the thread spins on
// EAGAIN, as sockperf --nonblocked does: its CPU never idles, so the time to
// wake it (tens of µs in a VM) leaves the round trip.
type hotIO struct {
	fd   uintptr
	busy bool
	// idle is set by a preemption signal or a blocking call's timeout
	// (again): the next receive waits in a call that enters the
	// scheduler (read).
	idle bool
	// spins counts EAGAINs while busy polling, so stop is checked every
	// spinCheck of them, not on every turn.
	spins int
}

const (
	// yieldEvery is just under the 10 ms after which sysmon signals a
	// goroutine that has not rescheduled. A yield is not free: the
	// scheduler's code and data are cold after the kernel's network path,
	// and one took the server's hot thread 5–8 µs (median; measured around
	// Gosched during busy-polled rr), a delay the next request waits out.
	// At 5 ms it fell on about 1 % of transactions, right at p99; one-way
	// p99 against 9 ms, medians of per-round ratios: 0.93 (8 rounds) and
	// 0.89 (12), p50 the same.
	yieldEvery = 9 * time.Millisecond
	spinCheck  = 256
)

func rawRead(fd uintptr, p []byte, flags int) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(flags), 0, 0)
	return int(n), e
}

// read is one receive into p. A raw call that blocks 10 ms is signalled
// by sysmon, which takes the goroutine for running, not waiting; after
// that signal (or a timeout) the peer is idle, not mid-transaction, so the next wait is
// a call that enters the scheduler, which sysmon leaves alone (it may
// lend the P out), and an idle socket's thread sleeps instead of waking
// 100 times a second.
func (h *hotIO) read(p []byte) (int, syscall.Errno) {
	if !h.idle {
		return rawRead(h.fd, p, 0)
	}
	h.idle = false
	n, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, h.fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0, 0, 0)
	return int(n), e
}

func rawWrite(fd uintptr, p []byte, flags int) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(flags), 0, 0)
	return int(n), e
}

// rawClose closes a hot socket without entering the scheduler. Closing a
// TCP socket (no SO_LINGER here) never blocks, but it sends the FIN, and
// on a veth path the peer's receive of it runs in this call: long enough
// for sysmon to take the P of a call that entered the scheduler, and for
// the thread to pay for getting one back, on every crr transaction.
func rawClose(fd int) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
}

// again reports whether a call that returned EAGAIN (a blocking call's
// timeout, or nothing yet while busy polling) or EINTR should be retried:
// not once stop says so. EINTR is mostly the runtime's preemption signal,
// sent to a goroutine that ran (blocked, as the runtime sees it) for 10 ms:
// the thread yields, as asked.
func (h *hotIO) again(e syscall.Errno, stop func() bool) bool {
	if e == syscall.EINTR {
		h.idle = true
		runtime.Gosched()
	} else if !h.busy {
		h.idle = true // a blocking call's timeout
	} else {
		h.spins++
		if h.spins%spinCheck != 0 {
			return true
		}
	}
	return !stop()
}

// retry is what a failed call's error means: 0 to call again (EAGAIN or
// EINTR, until stop says so: then ETIMEDOUT), else the error itself.
func (h *hotIO) retry(e syscall.Errno, stop func() bool) syscall.Errno {
	switch {
	case e != syscall.EAGAIN && e != syscall.EINTR:
		return e
	case h.again(e, stop):
		return 0
	}
	return syscall.ETIMEDOUT
}

// readN reads exactly n bytes through buf.
func (h *hotIO) readN(buf []byte, n int, stop func() bool) syscall.Errno {
	for n > 0 {
		k, e := h.read(buf[:min(n, len(buf))])
		switch {
		case e == 0 && k == 0:
			return syscall.ECONNRESET // EOF: the peer is gone, or a stop's shutdown
		case e == 0:
			n -= k
		default:
			if e = h.retry(e, stop); e != 0 {
				return e
			}
		}
	}
	return 0
}

// write writes all of p.
func (h *hotIO) write(p []byte, stop func() bool) syscall.Errno {
	for len(p) > 0 {
		k, e := rawWrite(h.fd, p, syscall.MSG_NOSIGNAL)
		if e == 0 {
			p = p[k:]
		} else if e = h.retry(e, stop); e != 0 {
			return e
		}
	}
	return 0
}

// writeN writes n zero bytes.
func (h *hotIO) writeN(n int, stop func() bool) syscall.Errno {
	for n > 0 {
		k := min(n, len(zeros))
		if e := h.write(zeros[:k], stop); e != 0 {
			return e
		}
		n -= k
	}
	return 0
}

// setNonblock puts fd in non-blocking mode, for busy polling.
func setNonblock(fd uintptr) syscall.Errno {
	fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	if e != 0 {
		return e
	}
	_, _, e = syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_SETFL, fl|syscall.O_NONBLOCK)
	return e
}

// setRecvTimeout sets how long one blocking receive on fd waits.
func setRecvTimeout(fd uintptr, d time.Duration) syscall.Errno {
	tv := syscall.NsecToTimeval(int64(d))
	_, _, e := syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO,
		uintptr(unsafe.Pointer(&tv)), unsafe.Sizeof(tv), 0)
	return e
}

// drainFd discards the datagrams queued on fd (late answers).
func drainFd(fd uintptr, buf []byte) {
	for {
		if _, e := rawRead(fd, buf, syscall.MSG_DONTWAIT); e != 0 && e != syscall.EINTR {
			return
		}
	}
}

// tcpHot is tcpWorker's loop on the hot path.
func (r *run) tcpHot(w *worker, s *sock, buf []byte) error {
	req, resp := r.cfg.RequestSize, r.cfg.ResponseSize
	h := hotIO{fd: uintptr(s.fd), busy: r.busyPoll}
	if h.busy {
		if e := setNonblock(h.fd); e != 0 {
			return fmt.Errorf("rr tcp: %w", os.NewSyscallError("fcntl", e))
		}
	}
	stop := func() bool { return w.isStopped() || time.Since(r.start) > r.endAt }
	var y serverkit.Yielder
	for !w.isStopped() {
		t0 := time.Since(r.start)
		e := h.writeN(req, stop)
		if e == 0 {
			e = h.readN(buf, resp, stop)
		}
		if e != 0 {
			return r.hotFail(w, "tcp", e)
		}
		t1 := time.Since(r.start)
		r.addAt(w, t1, t1-t0)
		if t1 > r.endAt {
			return nil
		}
		y.Maybe(t1, yieldEvery)
	}
	return nil
}

// udpHot is udpWorker's loop on the hot path. A response not back within
// the timeout is lost; receives block at most min(timeout, blockTimeout)
// at a time, so a timeout is noticed within that of its expiry.
func (r *run) udpHot(w *worker, s *sock) error {
	req, resp, timeout := r.cfg.RequestSize, r.cfg.ResponseSize, r.cfg.Timeout
	out := make([]byte, req)
	in := make([]byte, descriptors.MaxUDPPayload+1)
	if req >= 4 {
		binary.BigEndian.PutUint32(out, uint32(resp))
	}
	useSeq := req >= 8 && resp >= 8
	h := hotIO{fd: uintptr(s.fd), busy: r.busyPoll}
	if h.busy {
		if e := setNonblock(h.fd); e != 0 {
			return fmt.Errorf("rr udp: %w", os.NewSyscallError("fcntl", e))
		}
	} else if e := setRecvTimeout(h.fd, min(timeout, blockTimeout)); e != 0 {
		return fmt.Errorf("rr udp: %w", os.NewSyscallError("setsockopt", e))
	}
	stop := func() bool { return w.isStopped() || time.Since(r.start) > r.endAt }
	var (
		seq uint32
		y   serverkit.Yielder
	)
	for !w.isStopped() {
		seq++
		if useSeq {
			binary.BigEndian.PutUint32(out[4:], seq)
		}
		t0 := time.Since(r.start)
		if e := h.write(out, stop); e != 0 {
			if e == syscall.ECONNREFUSED && !r.over(w) {
				return r.udpSendErr(e)
			}
			return r.hotFail(w, "udp", e)
		}
		for {
			n, e := h.read(in)
			t1 := time.Since(r.start)
			switch {
			case e == syscall.EAGAIN || e == syscall.EINTR:
				if !h.again(e, stop) {
					return nil
				}
				if t1-t0 < timeout {
					continue
				}
				r.addLost(w, r.start.Add(t1))
				drainFd(h.fd, in)
			case e == syscall.ECONNREFUSED && !r.over(w):
				return r.udpSendErr(e)
			case e != 0:
				return r.hotFail(w, "udp", e)
			case t1-t0 > timeout:
				r.addLost(w, r.start.Add(t1))
				drainFd(h.fd, in)
			case n != resp || useSeq && binary.BigEndian.Uint32(in[4:]) != seq:
				continue // a late answer to a request counted as lost
			default:
				r.addAt(w, t1, t1-t0)
			}
			break
		}
		t := time.Since(r.start)
		if t > r.endAt {
			return nil
		}
		y.Maybe(t, yieldEvery)
	}
	return nil
}

// crrTarget is the server's address for crrHot's own connect, if it is
// an IP address.
func (r *run) crrTarget() (netip.AddrPort, bool) {
	ta, err := net.ResolveTCPAddr("tcp", r.cfg.Addr)
	if err != nil || ta.IP == nil {
		return netip.AddrPort{}, false
	}
	ap := ta.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

// crrHot is crrWorker's loop on the hot path: a blocking socket, connect,
// request, response and close per transaction, made with raw system calls
// as netperf's TCP_CRR makes them.
func (r *run) crrHot(w *worker, to netip.AddrPort) error {
	c := newCRRClient(to, r.cfg.RequestSize, r.cfg.ResponseSize)
	if !w.setSock(c.s) {
		return nil
	}
	var y serverkit.Yielder
	for !w.isStopped() {
		t0 := time.Since(r.start)
		deadline := min(t0+r.cfg.Timeout, r.endAt)
		stop := func() bool { return w.isStopped() || time.Since(r.start) > deadline }
		if e := c.open(w, stop); e != 0 {
			if r.over(w) || e == errStopped {
				return nil
			}
			return fmt.Errorf("rr crr: connect to %s: %w", r.cfg.Addr, os.NewSyscallError("connect", e))
		}
		e := c.exchange(stop)
		t1 := time.Since(r.start)
		if e != 0 {
			c.s.close()
			return r.hotFail(w, "crr", e)
		}
		r.addAt(w, t1, t1-t0)
		if r.measured(t1) {
			c.close(&w.tcp)
		} else {
			c.close(nil)
		}
		if t1 > r.endAt {
			return nil
		}
		y.Maybe(t1, yieldEvery)
	}
	return nil
}

// crrClient makes one worker's crr transactions on the hot path. Its sock
// is the worker's for the whole run, with a new descriptor per
// connection, so a transaction allocates nothing.
type crrClient struct {
	sa    *syscall.RawSockaddrAny
	saLen uint32
	first []byte // the hello and the request's first chunk, in one write
	rest  int    // the rest of the request
	resp  int
	buf   []byte
	s     *sock
}

// errStopped is open's answer when the worker was stopped.
const errStopped = syscall.ECANCELED

func newCRRClient(to netip.AddrPort, req, resp int) *crrClient {
	c := &crrClient{first: make([]byte, helloLen+min(req, chunk)), resp: resp, buf: make([]byte, min(resp, chunk)), s: &sock{fd: -1, closed: true}}
	hello{flagOnce, uint32(req), uint32(resp)}.put(c.first)
	c.rest = req - (len(c.first) - helloLen)
	c.sa, c.saLen = rawSockaddr(to)
	return c
}

// open connects a new socket and makes it the sock's descriptor;
// errStopped, with nothing left open, once w is stopped.
func (c *crrClient) open(w *worker, stop func() bool) syscall.Errno {
	// A request in one write needs no TCP_NODELAY: Nagle holds back only
	// what follows unacknowledged data (netperf sets none either).
	fd, e := rawConnect(c.sa, c.saLen, c.rest > 0, stop)
	if e != 0 {
		return e
	}
	if !c.s.reopen(fd, w) {
		return errStopped
	}
	return 0
}

// exchange sends the hello and the request and reads the response.
func (c *crrClient) exchange(stop func() bool) syscall.Errno {
	h := hotIO{fd: uintptr(c.s.fd)}
	e := h.write(c.first, stop)
	if e == 0 && c.rest > 0 {
		e = h.writeN(c.rest, stop)
	}
	if e == 0 {
		e = h.readN(c.buf, c.resp, stop)
	}
	return e
}

// close waits for the server's FIN, so this side does not keep the port
// in TIME_WAIT (the server closes first), adds the connection's TCP_INFO
// to acc (unless nil: a transaction not measured), and closes the socket.
// Read after the FIN, the retransmits include any of the whole exchange.
func (c *crrClient) close(acc *tcpinfo.Acc) {
	_, _ = rawRead(uintptr(c.s.fd), c.buf[:1], 0)
	if acc != nil {
		acc.ReadFd(c.s.fd)
	}
	c.s.close()
}

// rawSockaddr is to as the kernel takes it.
func rawSockaddr(to netip.AddrPort) (*syscall.RawSockaddrAny, uint32) {
	var sa syscall.RawSockaddrAny
	port := (*[2]byte)(unsafe.Pointer(&sa.Addr.Data[0]))
	binary.BigEndian.PutUint16(port[:], to.Port())
	if to.Addr().Is4() {
		p := (*syscall.RawSockaddrInet4)(unsafe.Pointer(&sa))
		p.Family = syscall.AF_INET
		p.Addr = to.Addr().As4()
		return &sa, syscall.SizeofSockaddrInet4
	}
	p := (*syscall.RawSockaddrInet6)(unsafe.Pointer(&sa))
	p.Family = syscall.AF_INET6
	p.Addr = to.Addr().As16()
	return &sa, syscall.SizeofSockaddrInet6
}

// rawConnect opens a blocking TCP socket (blockTimeout on each call, and
// the connect; no Nagle if nodelay) connected to sa; the connect is
// retried until stop says so.
func rawConnect(sa *syscall.RawSockaddrAny, saLen uint32, nodelay bool, stop func() bool) (int, syscall.Errno) {
	fd, _, e := syscall.RawSyscall(syscall.SYS_SOCKET, uintptr(sa.Addr.Family), syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if e != 0 {
		return -1, e
	}
	type opt struct {
		level, name uintptr
		p           unsafe.Pointer
		n           uintptr
	}
	one := int32(1)
	tv := syscall.NsecToTimeval(int64(blockTimeout))
	opts := [3]opt{
		{syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, unsafe.Pointer(&tv), unsafe.Sizeof(tv)},
		{syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, unsafe.Pointer(&tv), unsafe.Sizeof(tv)},
		{syscall.IPPROTO_TCP, syscall.TCP_NODELAY, unsafe.Pointer(&one), 4},
	}
	n := 2
	if nodelay {
		n = 3
	}
	for _, o := range opts[:n] {
		if _, _, e := syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, fd, o.level, o.name, uintptr(o.p), o.n, 0); e != 0 {
			syscall.Close(int(fd))
			return -1, e
		}
	}
	for {
		_, _, e := syscall.RawSyscall(syscall.SYS_CONNECT, fd, uintptr(unsafe.Pointer(sa)), uintptr(saLen))
		switch e {
		case 0, syscall.EISCONN:
			return int(fd), 0
		case syscall.EINTR, syscall.EALREADY, syscall.EINPROGRESS:
			if !stop() {
				continue
			}
			e = syscall.ETIMEDOUT
		}
		syscall.Close(int(fd))
		return -1, e
	}
}

func uintptrOf(p []byte) uintptr { return uintptr(unsafe.Pointer(&p[0])) }
