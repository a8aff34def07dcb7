package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"

	"github.com/valyala/fasthttp"
	"golang.org/x/sys/unix"
)

// pong's transport: one event loop per P, each waiting in its own epoll
// set on the connections it accepted, as nginx's workers do. On Go's
// netpoller, connections were handed between threads: the thread that
// found them ready woke another, on a vCPU that had halted, and under wrk
// pong left 8-15 % of the CPUs idle where nginx left 1-3 % (measured in
// docs/benchmarks.md, with a prototype of these loops at 1.22× nginx's
// rate for 100 kB bodies where pong on fasthttp made 1.00×).
//
// What pong answers is still the fasthttp handler's (pongHandler.serve);
// the loops parse each request head with fasthttp, run the handler, and
// write its answer themselves: headers and small bodies with one write,
// large bodies with sendfile from the memfd.
//
// The one answer that takes time, TCPInfoPath's (TCP_INFO of every
// connection, thousands of system calls), is no loop's work: a goroutine
// reads the book and posts the snapshot to the loop, which answers it
// when it wakes, and serves its other connections meanwhile.
//
// A loop's wait is a raw epoll_wait while it has work, like rr's hot path
// (hot.go): the thread keeps its P, so no other thread is woken to run
// what it finds. The raw wait lasts at most loopYield, after which the
// loop yields (timers and the runtime's other goroutines run); a wait
// that finds nothing, or a preemption signal, makes the next wait one
// that enters the scheduler, so an idle pong sleeps.

// Loop limits.
const (
	// headMax bounds a request head; a longer one is answered 431.
	headMax = 4 << 10
	// loopYield is the longest a loop runs or waits holding its P without
	// yielding: under the 10 ms after which sysmon signals it.
	loopYield = 9 * time.Millisecond
	// sweepEvery is how often a loop closes connections past their
	// deadline.
	sweepEvery = time.Second
	maxEvents  = 128
)

var errNoSocket = errors.New("pong: the listener has no socket to wait on")

// ServePong serves pong, for sizes up to maxSize (see pingpong.CheckMaxSize), on
// ln until ctx is cancelled, then lets answers in flight finish for up to
// ShutdownGrace and returns nil. ln must be a TCP listener.
func ServePong(ctx context.Context, ln net.Listener, maxSize int) error {
	return serveLoops(ctx, ln, newPong(maxSize, chunkSize))
}

// serveLoops serves h on ln with one loop per P.
func serveLoops(ctx context.Context, ln net.Listener, h *pongHandler) error {
	lfd, err := listenerFd(ln)
	if err != nil {
		return err
	}
	// The duplicate keeps the socket; closing ln takes it off the
	// netpoller, which would otherwise wake for every connection.
	ln.Close()
	defer unix.Close(lfd)

	var sh shared
	n := runtime.GOMAXPROCS(0)
	loops := make([]*loop, 0, n)
	defer func() {
		for _, l := range loops {
			l.close()
		}
	}()
	for range n {
		l, err := newLoop(h, lfd, &sh)
		if err != nil {
			return err
		}
		loops = append(loops, l)
	}
	errc := make(chan error, n)
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- l.run()
		}()
	}
	var first error
	select {
	case <-ctx.Done():
	case first = <-errc: // a loop failed: stop the others
	}
	sh.stopping.Store(true)
	for _, l := range loops {
		l.wakeUp()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if first == nil {
			first = err
		}
	}
	return first
}

// listenerFd duplicates ln's socket, non-blocking.
func listenerFd(ln net.Listener) (int, error) {
	fd, err := serverkit.Dup(ln)
	switch {
	case errors.Is(err, serverkit.ErrNoSocket):
		return -1, errNoSocket
	case err != nil:
		return -1, fmt.Errorf("pong: dup listener: %w", err)
	}
	return fd, nil
}

// shared is what the loops of one server share.
type shared struct {
	stopping atomic.Bool
	conns    atomic.Int64 // open connections, all loops
}

// loop is one event loop: its epoll set, the connections it accepted,
// and one request context it parses every request into.
type loop struct {
	h    *pongHandler
	sh   *shared
	lfd  int // the listener (every loop's set holds it, EPOLLEXCLUSIVE)
	ep   int
	wake int // an eventfd: written when the server stops
	cs   map[int32]*pconn
	evs  []unix.EpollEvent

	mail mailbox

	ctx *fasthttp.RequestCtx
	rd  bytes.Reader
	br  *bufio.Reader
	iov [2]unix.Iovec

	now       time.Time
	hot       bool      // the last wait found work: wait raw
	lastYield time.Time // when the loop last let the scheduler in
	nextSweep time.Time
	stopAt    time.Time // zero until the loop sees the server stop
}

func newLoop(h *pongHandler, lfd int, sh *shared) (*loop, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("pong: epoll: %w", err)
	}
	l := &loop{h: h, sh: sh, lfd: lfd, ep: ep, wake: -1, cs: map[int32]*pconn{},
		evs: make([]unix.EpollEvent, maxEvents), ctx: new(fasthttp.RequestCtx), br: bufio.NewReaderSize(nil, headMax)}
	if l.wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		l.close()
		return nil, fmt.Errorf("pong: eventfd: %w", err)
	}
	if err := l.watch(l.wake, unix.EPOLLIN); err != nil {
		l.close()
		return nil, err
	}
	if err := l.watch(lfd, unix.EPOLLIN|unix.EPOLLEXCLUSIVE); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

func (l *loop) watch(fd int, events uint32) error {
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: events, Fd: int32(fd)}); err != nil {
		return fmt.Errorf("pong: epoll_ctl: %w", err)
	}
	return nil
}

// close closes the loop's descriptors and any connection left.
func (l *loop) close() {
	for _, c := range l.cs {
		l.drop(c)
	}
	l.mail.close()
	if l.wake >= 0 {
		unix.Close(l.wake)
	}
	unix.Close(l.ep)
}

// mailbox holds the snapshots read for a loop's connections, until the
// loop answers them (deliver).
type mailbox struct {
	mu     sync.Mutex
	closed bool // the loop is gone: its wake descriptor too
	posts  []posted
}

type posted struct {
	c *pconn
	s tcpinfo.Snapshot
}

func (m *mailbox) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed, m.posts = true, nil
}

// readBook reads the book for c's TCPInfoPath request off the loop, and
// wakes the loop with the snapshot.
func (l *loop) readBook(c *pconn) {
	go func() {
		s := l.h.book.Snapshot()
		l.mail.mu.Lock()
		defer l.mail.mu.Unlock()
		if l.mail.closed {
			return
		}
		l.mail.posts = append(l.mail.posts, posted{c, s})
		l.wakeUp() // under the lock: close waits, so the descriptor is the loop's
	}()
}

// deliver answers the connections whose snapshots came, and goes on with
// what each has to do.
func (l *loop) deliver() {
	l.mail.mu.Lock()
	ps := l.mail.posts
	l.mail.posts = nil
	l.mail.mu.Unlock()
	for _, p := range ps {
		if l.cs[int32(p.c.fd)] != p.c || !p.c.pending {
			continue // closed meanwhile
		}
		l.answerSnapshot(p.c, p.s)
		if !l.step(p.c) {
			l.drop(p.c)
		}
	}
}

// answerSnapshot queues c's answer to its TCPInfoPath request.
func (l *loop) answerSnapshot(c *pconn, s tcpinfo.Snapshot) {
	c.pending = false
	l.ctx.Response.Reset()
	answerTCPInfo(l.ctx, TCPInfo{Pong: &s})
	l.queue(c, c.pendingClose, c.pendingHTTP11, false)
}

// wakeUp makes the loop's wait return.
func (l *loop) wakeUp() {
	one := [8]byte{1}
	_, _ = unix.Write(l.wake, one[:])
}

// run serves until the server stops and the loop's connections are done.
func (l *loop) run() error {
	l.now = time.Now()
	l.lastYield, l.nextSweep = l.now, l.now.Add(sweepEvery)
	for {
		if l.sh.stopping.Load() && l.stop() {
			return nil
		}
		n, err := l.wait()
		if err != nil {
			return err
		}
		l.now = time.Now()
		for _, ev := range l.evs[:n] {
			switch fd := int(ev.Fd); fd {
			case l.lfd:
				l.accept()
			case l.wake:
				var b [8]byte
				_, _ = unix.Read(l.wake, b[:])
				l.deliver()
			default:
				c := l.cs[ev.Fd]
				if c == nil {
					continue
				}
				// A client that shut its side down gets what it asked
				// for, then the close.
				hup := ev.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0
				if !l.step(c) || hup && c.idle() {
					l.drop(c)
				}
			}
		}
		if !l.now.Before(l.nextSweep) || !l.hot {
			l.sweep()
		}
		if l.now.Sub(l.lastYield) >= loopYield {
			runtime.Gosched()
			l.lastYield = l.now
		}
	}
}

// wait waits for events: raw while the loop has work (it keeps its P),
// for what is left of its turn before it yields; else in a call that
// enters the scheduler (an idle loop sleeps), until the first deadline of
// its connections. Waking every second instead had sysmon take the
// waiting loop's P each time and then poll every 20 µs for a while: 100
// wake-ups a second of an idle pong.
func (l *loop) wait() (int, error) {
	if l.hot {
		// What is left of the turn (the events' handling counted), so
		// the loop yields before sysmon would signal it.
		now := time.Now()
		left := loopYield - now.Sub(l.lastYield)
		if left < time.Millisecond {
			runtime.Gosched()
			l.lastYield, left = now, loopYield
		}
		r, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(l.ep),
			uintptr(unsafe.Pointer(&l.evs[0])), uintptr(len(l.evs)), uintptr(left/time.Millisecond), 0, 0)
		switch {
		case e == syscall.EINTR: // the runtime's preemption signal
			l.hot = false
			runtime.Gosched()
			return 0, nil
		case e != 0:
			return 0, fmt.Errorf("pong: epoll_wait: %w", e)
		case r == 0:
			l.hot = false
		}
		return int(r), nil
	}
	ms := -1 // no connection: until one comes, or the stop
	if len(l.cs) > 0 || !l.stopAt.IsZero() {
		next := l.nextSweep
		if len(l.cs) > 0 {
			next = l.firstDeadline()
		}
		if !l.stopAt.IsZero() && l.stopAt.Before(next) {
			next = l.stopAt
		}
		ms = int(min(max(next.Sub(l.now), time.Millisecond), time.Hour) / time.Millisecond)
	}
	n, err := unix.EpollWait(l.ep, l.evs, ms)
	switch {
	case err == unix.EINTR:
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("pong: epoll_wait: %w", err)
	}
	l.hot = n > 0
	return n, nil
}

// firstDeadline is the earliest of the connections' deadlines.
func (l *loop) firstDeadline() time.Time {
	var first time.Time
	for _, c := range l.cs {
		if first.IsZero() || c.deadline.Before(first) {
			first = c.deadline
		}
	}
	return first
}

// stop is the loop's part of a shutdown: no more accepts, idle
// connections closed at once, the others once answered or at the end of
// ShutdownGrace. True when the loop is done.
func (l *loop) stop() bool {
	if l.stopAt.IsZero() {
		l.stopAt = l.now.Add(ShutdownGrace)
		_ = unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, l.lfd, nil)
		for _, c := range l.cs {
			if c.idle() {
				l.drop(c)
			}
		}
	}
	if !l.now.Before(l.stopAt) {
		for _, c := range l.cs {
			l.drop(c)
		}
	}
	return len(l.cs) == 0
}

// sweep closes connections past their deadline.
func (l *loop) sweep() {
	l.nextSweep = l.now.Add(sweepEvery)
	for _, c := range l.cs {
		if l.now.After(c.deadline) {
			l.drop(c)
		}
	}
}

// busyText is what a connection beyond maxConns gets, as fasthttp answers
// beyond its Concurrency.
const busyText = "The connection cannot be served because Server.Concurrency limit exceeded"

var busyAnswer = []byte(fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"+
	"Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(busyText), busyText))

// accept takes one connection (the listener is level-triggered and shared:
// one at a time spreads a burst of connections over the loops).
func (l *loop) accept() {
	fd, _, err := unix.Accept4(l.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
	if err != nil {
		return // EAGAIN (another loop took it), or the client gave up
	}
	if l.sh.conns.Add(1) > maxConns {
		_, _ = unix.Write(fd, busyAnswer)
		unix.Close(fd)
		l.sh.conns.Add(-1)
		return
	}
	// As Go's net and nginx (tcp_nodelay) do: no Nagle wait for the
	// last segment of an answer.
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := l.watch(fd, unix.EPOLLIN|unix.EPOLLOUT|unix.EPOLLRDHUP|unix.EPOLLET); err != nil {
		unix.Close(fd)
		l.sh.conns.Add(-1)
		return
	}
	l.h.book.Open(fd)
	l.cs[int32(fd)] = &pconn{fd: fd, deadline: l.now.Add(readTimeout), body: pongBody{h: l.h}}
}

// drop closes a connection.
func (l *loop) drop(c *pconn) {
	delete(l.cs, int32(c.fd))
	l.h.book.Close(c.fd) // its last TCP_INFO, before the descriptor can be reused
	unix.Close(c.fd)
	l.sh.conns.Add(-1)
}

// pconn is one connection: the bytes read and not yet parsed, and the
// answer being written.
type pconn struct {
	fd       int
	in       [headMax]byte
	n        int  // bytes in in
	drained  bool // the last read left the socket empty
	skip     int  // request body bytes still to discard
	out      []byte
	outOff   int
	body     pongBody // a streamed body: body.off < body.n while it is being sent
	sendfile bool     // body leaves with sendfile
	closing  bool     // close once the answer is out
	deadline time.Time
	// pending: a TCPInfoPath request waits for its snapshot (readBook);
	// the request's Connection: close and HTTP version, for its answer.
	pending       bool
	pendingClose  bool
	pendingHTTP11 bool
}

// idle reports a connection between requests: nothing read, nothing to
// write, no answer awaited.
func (c *pconn) idle() bool { return c.n == 0 && c.skip == 0 && !c.writing() && !c.pending }

func (c *pconn) writing() bool { return c.outOff < len(c.out) || c.body.off < c.body.n }

// step does all a connection's event allows: write what is pending, then
// read, parse and answer requests until the socket has no more to read
// or no room to write. False to close the connection.
func (l *loop) step(c *pconn) bool {
	c.drained = false // an event: the socket may have more
	for {
		if c.pending {
			return true // deliver resumes
		}
		if c.writing() {
			if !l.flush(c) {
				return false
			}
			if c.writing() {
				return true // the socket is full: EPOLLOUT resumes
			}
			if c.closing {
				return false
			}
			c.deadline = l.now.Add(idleTimeout)
			c.out, c.outOff = c.out[:0], 0
		}
		if c.skip > 0 {
			k := min(c.skip, c.n)
			c.consume(k)
			c.skip -= k
		}
		if l.sh.stopping.Load() && c.idle() {
			return false
		}
		if c.skip == 0 {
			answered, ok := l.request(c)
			if !ok {
				return false
			}
			if c.pending {
				l.readBook(c)
				return true
			}
			if answered {
				continue
			}
			if c.n == len(c.in) {
				l.reject(c, fasthttp.StatusRequestHeaderFieldsTooLarge)
				continue
			}
		}
		if c.drained {
			return true // the next segment raises a new edge
		}
		if !l.read(c) {
			return false
		}
	}
}

// read reads what the socket has into c.in (up to its room; with a body to
// skip, the room is reused). False at the end of the stream or on an error.
func (l *loop) read(c *pconn) bool {
	room := len(c.in) - c.n
	k, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(c.fd), uintptr(unsafe.Pointer(&c.in[c.n])), uintptr(room))
	switch {
	case e == syscall.EAGAIN:
		c.drained = true
		return true
	case e == syscall.EINTR:
		return true
	case e != 0 || k == 0:
		return false
	}
	if c.n == 0 && c.skip == 0 {
		c.deadline = l.now.Add(readTimeout) // a request begins
	}
	c.n += int(k)
	// A short read emptied the socket: for a stream socket, what arrives
	// later raises a new edge, so no read has to come back with EAGAIN.
	c.drained = int(k) < room
	return true
}

// consume drops the first k bytes of c.in.
func (c *pconn) consume(k int) {
	copy(c.in[:], c.in[k:c.n])
	c.n -= k
}

// headEnd returns the length of the request head at the start of b (up to
// and including its empty line), or -1 when b has no whole head yet.
func headEnd(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		switch {
		case i < len(b) && b[i] == '\n':
			return i + 1
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			return i + 2
		}
	}
}

// request parses the request at the start of c.in and queues its answer,
// or for TCPInfoPath marks c pending (the caller has the book read).
// answered is false when the head is not whole yet; ok false when the
// connection is to be dropped without an answer.
func (l *loop) request(c *pconn) (answered, ok bool) {
	// Empty lines before a request line are allowed (RFC 9112, 2.2).
	lead := 0
	for lead < c.n && (c.in[lead] == '\r' || c.in[lead] == '\n') {
		lead++
	}
	if lead > 0 {
		c.consume(lead)
	}
	end := headEnd(c.in[:c.n])
	if end < 0 {
		return false, true
	}
	ctx := l.ctx
	ctx.Request.Reset()
	ctx.Response.Reset()
	l.rd.Reset(c.in[:end])
	l.br.Reset(&l.rd)
	err := ctx.Request.Header.Read(l.br)
	c.consume(end)
	if err != nil {
		l.reject(c, fasthttp.StatusBadRequest)
		return true, true
	}
	switch cl := ctx.Request.Header.ContentLength(); {
	case cl == -1: // chunked: ping and siege send no bodies
		l.reject(c, fasthttp.StatusNotImplemented)
		return true, true
	case cl > maxRequestBodySize:
		l.reject(c, fasthttp.StatusRequestEntityTooLarge)
		return true, true
	case cl > 0:
		c.skip = cl
	}
	if isTCPInfo(ctx) {
		c.pending, c.pendingClose, c.pendingHTTP11 = true, ctx.Request.Header.ConnectionClose(), ctx.Request.Header.IsHTTP11()
		return true, true
	}
	l.h.serve(ctx)
	if ctx.Hijacked() {
		// The handler dropped the connection. A hijacked context stays
		// so: the loop takes a new one.
		l.ctx = new(fasthttp.RequestCtx)
		return false, false
	}
	l.queue(c, ctx.Request.Header.ConnectionClose(), ctx.Request.Header.IsHTTP11(), ctx.Request.Header.IsHead())
	return true, true
}

// queue makes the answer in l.ctx.Response c's, for a request that asked
// to close or not, in HTTP/1.1 or 1.0, with HEAD or not.
func (l *loop) queue(c *pconn, closeAsked, http11, head bool) {
	c.closing = closeAsked || l.sh.stopping.Load()
	resp := &l.ctx.Response
	if c.closing {
		resp.SetConnectionClose()
	} else if !http11 {
		resp.Header.Set(fasthttp.HeaderConnection, "keep-alive")
	}
	if resp.IsBodyStream() {
		n := resp.Header.ContentLength()
		c.out = resp.Header.AppendBytes(c.out[:0])
		if !head {
			l.stream(c, n)
		}
	} else {
		body := resp.Body()
		resp.Header.SetContentLength(len(body))
		c.out = resp.Header.AppendBytes(c.out[:0])
		if !head {
			c.out = append(c.out, body...)
		}
	}
	resp.Reset() // gives the handler's body stream back to its pool
	c.outOff = 0
}

// stream queues a body of n >= 5 bytes from pong's buffer. Its "p" joins
// the headers; the rest goes by sendfile when the memfd can send it (as
// pongBody.sendfile chose), else from the buffer, its first segment in
// the headers' write.
func (l *loop) stream(c *pconn, n int) {
	c.body.n, c.body.off = n, 0
	c.out = append(c.out, c.body.segment()...) // "p"
	c.body.off = 1
	c.sendfile = l.h.file >= 0 && n >= sendfileMin && len(l.h.buf) >= sendfileMin
	if c.sendfile {
		l.h.sendfiles.Add(1)
	}
}

// reject queues an error answer with a short text and closes after it.
func (l *loop) reject(c *pconn, code int) {
	resp := &l.ctx.Response
	resp.Reset()
	text := fasthttp.StatusMessage(code)
	plainError(l.ctx, code, text)
	resp.Header.SetContentLength(len(text))
	resp.SetConnectionClose()
	c.out = append(resp.Header.AppendBytes(c.out[:0]), text...)
	c.outOff, c.closing = 0, true
	c.n, c.skip = 0, 0
	resp.Reset()
}

// flush writes as much of the answer as the socket takes. False on an
// error (the client is gone).
func (l *loop) flush(c *pconn) bool {
	for c.writing() {
		var k uintptr
		var e syscall.Errno
		head := c.out[c.outOff:]
		switch {
		case len(head) > 0 && c.body.off < c.body.n && !c.sendfile:
			// Headers and the first of the body in one write.
			seg := c.body.segment()
			l.iov[0].Base, l.iov[1].Base = &head[0], &seg[0]
			l.iov[0].SetLen(len(head))
			l.iov[1].SetLen(len(seg))
			k, _, e = syscall.RawSyscall(syscall.SYS_WRITEV, uintptr(c.fd), uintptr(unsafe.Pointer(&l.iov[0])), 2)
		case len(head) > 0:
			flags := syscall.MSG_NOSIGNAL
			if c.body.off < c.body.n {
				flags |= syscall.MSG_MORE // the body follows at once
			}
			k, _, e = syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(c.fd), uintptr(unsafe.Pointer(&head[0])), uintptr(len(head)), uintptr(flags), 0, 0)
		case c.sendfile:
			c.body.sendErr = nil
			if !c.body.sendChunks(uintptr(c.fd)) {
				return true // EAGAIN
			}
			if c.body.sendErr != nil {
				return false
			}
			continue
		default:
			seg := c.body.segment()
			k, _, e = syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(c.fd), uintptr(unsafe.Pointer(&seg[0])), uintptr(len(seg)), syscall.MSG_NOSIGNAL, 0, 0)
		}
		switch {
		case e == syscall.EAGAIN:
			return true
		case e == syscall.EINTR:
			continue
		case e != 0:
			return false
		}
		c.deadline = l.now.Add(idleTimeout)
		if h := len(head); int(k) >= h {
			c.outOff += h
			c.body.off += int(k) - h
		} else {
			c.outOff += int(k)
		}
	}
	return true
}
