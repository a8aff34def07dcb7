package rr

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/hdrtime"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// worker is one connection's (or, crr, one sequence of connections') state.
type worker struct {
	// Interval data, swapped out by the reporter under mu: [0] warm-up,
	// [1] measured, so the measured intervals add up to the Result.
	mu      sync.Mutex
	cur     [2]*hdr.Histogram
	curLost [2]int64

	total *hdr.Histogram // measured round trips; the worker's own until it ends
	lost  int64          // measured losses (udp)
	tcp   tcpinfo.Acc    // TCP_INFO of its connection(s), the worker's own until it ends

	cmu     sync.Mutex
	sock    *sock       // the connection in use, for stop to unblock
	stopped atomic.Bool // checked once per transaction: a deadline set after stop's would undo it
}

// setSock records the connection in use; false if the run is stopping.
func (w *worker) setSock(s *sock) bool {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	if w.stopped.Load() {
		return false
	}
	w.sock = s
	return true
}

// stop unblocks the worker's I/O for good.
func (w *worker) stop() {
	w.cmu.Lock()
	w.stopped.Store(true)
	if w.sock != nil {
		w.sock.unblock()
	}
	w.cmu.Unlock()
}

func (w *worker) isStopped() bool { return w.stopped.Load() }

// run carries the timing shared by the workers.
type run struct {
	cfg          Config
	dial         func(ctx context.Context, network, addr string) (net.Conn, error)
	start        time.Time // the clock starts (warm-up begins)
	measureStart time.Time // warm-up over
	end          time.Time
	endAt        time.Duration // end - start
	busyPoll     bool
}

// add records one transaction that ended at t1 (unless after the end).
func (r *run) add(w *worker, t1 time.Time, rt time.Duration) {
	r.addAt(w, t1.Sub(r.start), rt)
}

// addAt is add with t1 as the time since the run's start: what the hot
// path reads from the monotonic clock alone (time.Since), half the cost of
// time.Now.
func (r *run) addAt(w *worker, at, rt time.Duration) {
	if at > r.endAt {
		return
	}
	measured := r.measured(at)
	slot := 0
	if measured {
		slot = 1
	}
	w.mu.Lock()
	hdrtime.Record(w.cur[slot], rt)
	w.mu.Unlock()
	if measured {
		hdrtime.Record(w.total, rt)
	}
}

// measured reports whether a transaction that ended at (since the run's
// start) counts in the Result: after the warm-up, not after the end.
func (r *run) measured(at time.Duration) bool {
	return at >= r.cfg.Omit && at <= r.endAt
}

func (r *run) addLost(w *worker, t time.Time) {
	measured := !t.Before(r.measureStart)
	slot := 0
	if measured {
		slot = 1
	}
	w.mu.Lock()
	w.curLost[slot]++
	w.mu.Unlock()
	if measured {
		w.lost++
	}
}

// Run runs the rr client described by cfg, calling emit (if not nil) after
// every interval from the calling goroutine, and returns the result of the
// measured part. If ctx ends first, it returns what was measured so far and
// ctx's error; if a worker fails, what was measured and that error.
func Run(ctx context.Context, cfg Config, emit func(Interval)) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withDefaults()
	r := &run{cfg: cfg, dial: cfg.Dial}
	if r.dial == nil {
		d := &net.Dialer{Timeout: cfg.Timeout}
		r.dial = d.DialContext
	}
	res := Result{Workload: "rr", Type: "result", Protocol: cfg.Protocol, RequestSize: cfg.RequestSize,
		ResponseSize: cfg.ResponseSize, Parallel: cfg.Parallel}

	r.busyPoll = cfg.BusyPoll
	// At least one P per worker on the hot path (hot.go): a worker blocked
	// in a raw system call keeps its P. The rr command, a process of its
	// own, runs with exactly that many, so no P idles.
	defer serverkit.AtLeastProcs(cfg.Parallel)()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ws := make([]*worker, cfg.Parallel)
	for i := range ws {
		ws[i] = &worker{cur: [2]*hdr.Histogram{hdrtime.New(), hdrtime.New()}, total: hdrtime.New()}
	}
	stopAll := func() {
		for _, w := range ws {
			w.stop()
		}
	}
	defer context.AfterFunc(ctx, stopAll)()

	// Connect every worker before the clock starts.
	conns := make([]*sock, cfg.Parallel)
	closeAll := func() {
		for _, c := range conns {
			if c != nil {
				c.close()
			}
		}
	}
	if cfg.Protocol != ProtocolCRR {
		for i := range conns {
			c, err := r.connect(ctx)
			if err != nil {
				closeAll()
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				return res, err
			}
			conns[i] = c
			if !ws[i].setSock(c) {
				closeAll()
				return res, ctx.Err()
			}
		}
	}
	defer closeAll()

	r.start = time.Now()
	r.measureStart = r.start.Add(cfg.Omit)
	r.end = r.measureStart.Add(cfg.Duration)
	r.endAt = r.end.Sub(r.start)
	res.Time = r.measureStart
	// Blocking system calls ignore deadlines: stop the workers at the end.
	endTimer := time.AfterFunc(time.Until(r.end), stopAll)
	defer endTimer.Stop()

	var (
		wg      sync.WaitGroup
		errOnce sync.Once
		runErr  error
		running atomic.Int32
	)
	allDone := make(chan struct{})
	running.Store(int32(cfg.Parallel))
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch cfg.Protocol {
			case ProtocolTCP:
				err = r.tcpWorker(w, conns[i])
			case ProtocolUDP:
				err = r.udpWorker(w, conns[i])
			case ProtocolCRR:
				err = r.crrWorker(ctx, w)
			}
			if err != nil && !w.isStopped() {
				errOnce.Do(func() { runErr = err })
				cancel()
			}
			if running.Add(-1) == 0 {
				close(allDone)
			}
		}()
	}

	// Report intervals until the workers are done.
	agg := hdrtime.New()
	spares := make([]*hdr.Histogram, len(ws))
	for i := range spares {
		spares[i] = hdrtime.New()
	}
	from := r.start
	report := func(to time.Time, final bool) {
		agg.Reset()
		var lost int64
		slot := 0
		if to.After(r.measureStart) {
			slot = 1
		}
		for i, w := range ws {
			w.mu.Lock()
			h := w.cur[slot]
			w.cur[slot], spares[i] = spares[i], h
			lost += w.curLost[slot]
			w.curLost = [2]int64{}
			if slot == 1 && w.cur[0].TotalCount() > 0 {
				w.cur[0].Reset() // warm-up stragglers, after its last interval
			}
			w.mu.Unlock()
			agg.Merge(h)
			h.Reset()
		}
		span := to.Sub(from)
		n := agg.TotalCount()
		if emit != nil && span > 0 && !(final && n == 0 && lost == 0) {
			iv := Interval{Workload: "rr", Type: "interval", Protocol: cfg.Protocol,
				Start: from.Sub(r.start).Seconds(), End: to.Sub(r.start).Seconds(),
				Omitted: !to.After(r.measureStart), Transactions: n, Lost: lost,
				TransPerSec: float64(n) / span.Seconds(),
				P50:         hdrtime.US(agg.ValueAtQuantile(50)), P99: hdrtime.US(agg.ValueAtQuantile(99))}
			emit(iv)
		}
		from = to
	}
	next := func() time.Time {
		if from.Before(r.measureStart) {
			return minTime(from.Add(cfg.Interval), r.measureStart)
		}
		return minTime(from.Add(cfg.Interval), r.end)
	}
	timer := time.NewTimer(time.Until(next()))
loop:
	for {
		select {
		case <-timer.C:
			b := next()
			if !b.Before(r.end) {
				<-allDone // the workers stop at the end: all in the last interval
				report(b, false)
				break loop
			}
			report(b, false)
			timer.Reset(time.Until(next()))
		case <-allDone:
			timer.Stop()
			report(minTime(time.Now(), r.end), true)
			break loop
		}
	}
	wg.Wait()

	total := hdrtime.New()
	var tcp tcpinfo.Acc
	for i, w := range ws {
		total.Merge(w.total)
		res.Lost += w.lost
		if cfg.Protocol == ProtocolTCP {
			// The connection is still open (closeAll is deferred); a
			// stop's shutdown leaves its TCP_INFO readable.
			readTCPInfo(&w.tcp, conns[i])
		}
		tcp.Merge(&w.tcp)
	}
	res.TCP = tcp.Stats()
	stopped := minTime(time.Now(), r.end)
	if d := stopped.Sub(r.measureStart); d > 0 {
		res.Duration = d.Seconds()
		res.TransPerSec = float64(total.TotalCount()) / d.Seconds()
	}
	res.Transactions = total.TotalCount()
	res.RoundTrip = Latency(hdrtime.Summarise(total))
	res.OneWay = res.RoundTrip.Half()
	res.Histogram = buckets(total)
	res.IO = r.io(conns)
	if runErr != nil {
		return res, runErr
	}
	return res, ctx.Err()
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// io names how the workers waited (Result.IO).
func (r *run) io(conns []*sock) string {
	hot := r.cfg.Protocol == ProtocolCRR && r.cfg.Dial == nil
	if len(conns) > 0 && conns[0] != nil {
		hot = conns[0].detached()
	}
	switch {
	case !hot:
		return "netpoller"
	case r.busyPoll && r.cfg.Protocol != ProtocolCRR:
		return "busy-poll"
	}
	return "blocking"
}

// connect opens one tcp connection (with its hello) or one udp test: a
// control connection and a registered UDP socket.
func (r *run) connect(ctx context.Context) (*sock, error) {
	if r.cfg.Protocol == ProtocolUDP {
		return r.connectUDP(ctx)
	}
	dctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	c, err := r.dial(dctx, "tcp", r.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("rr %s: connect to %s: %w", r.cfg.Protocol, r.cfg.Addr, err)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	var hb [helloLen]byte
	hello{0, uint32(r.cfg.RequestSize), uint32(r.cfg.ResponseSize)}.put(hb[:])
	_ = c.SetWriteDeadline(time.Now().Add(r.cfg.Timeout))
	if _, err := c.Write(hb[:]); err != nil {
		c.Close()
		return nil, fmt.Errorf("rr tcp: hello to %s: %w", r.cfg.Addr, err)
	}
	_ = c.SetWriteDeadline(time.Time{})
	return newSock(c), nil
}

// udpSetup bounds opening a udp test: the control connection's hello and
// token, and the registration of the UDP socket.
const udpSetup = 10 * time.Second

// connectUDP opens a udp test: over a TCP control connection, a hello
// with the sizes, answered with a token; then the UDP socket sends the
// token until the server echoes it (registered), at most every
// min(Timeout, 200 ms) for udpSetup.
func (r *run) connectUDP(ctx context.Context) (*sock, error) {
	dctx, cancel := context.WithTimeout(ctx, udpSetup)
	defer cancel()
	ctl, err := r.dial(dctx, "tcp", r.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("rr udp: connect to %s: %w", r.cfg.Addr, err)
	}
	fail := func(err error) (*sock, error) {
		ctl.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	stop := context.AfterFunc(dctx, func() { _ = ctl.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var hb [helloLen]byte
	hello{flagUDP, uint32(r.cfg.RequestSize), uint32(r.cfg.ResponseSize)}.put(hb[:])
	var token [tokenLen]byte
	_ = ctl.SetDeadline(time.Now().Add(udpSetup))
	if _, err := ctl.Write(hb[:]); err != nil {
		return fail(fmt.Errorf("rr udp: hello to %s: %w", r.cfg.Addr, err))
	}
	if _, err := io.ReadFull(ctl, token[:]); err != nil {
		return fail(fmt.Errorf("rr udp: %s opened no udp test (an older cnperf serve rr?): %w", r.cfg.Addr, err))
	}
	c, err := r.dial(dctx, "udp", r.cfg.Addr)
	if err != nil {
		return fail(fmt.Errorf("rr udp: connect to %s: %w", r.cfg.Addr, err))
	}
	reg := make([]byte, regLen)
	putReg(reg, token)
	in := make([]byte, descriptors.MaxUDPPayload+1)
	retry := min(r.cfg.Timeout, 200*time.Millisecond)
	for {
		if _, err := c.Write(reg); err != nil && !errors.Is(err, syscall.ECONNREFUSED) {
			c.Close()
			return fail(fmt.Errorf("rr udp: send to %s: %w", r.cfg.Addr, err))
		}
		_ = c.SetReadDeadline(time.Now().Add(retry))
		n, err := c.Read(in)
		if err == nil && n == regLen && string(in[:n]) == string(reg) {
			break
		}
		if dctx.Err() != nil {
			c.Close()
			return fail(fmt.Errorf("rr udp: %s did not acknowledge the udp socket within %s", r.cfg.Addr, udpSetup))
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, syscall.ECONNREFUSED) {
			c.Close()
			return fail(fmt.Errorf("rr udp: %w", err))
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	_ = ctl.SetDeadline(time.Time{})
	drainConn(c, in) // a second acknowledgement, if one came
	s := newSock(c)
	s.ctl = ctl
	return s, nil
}

// over reports whether an I/O error just means the run is over.
func (r *run) over(w *worker) bool {
	return w.isStopped() || !time.Now().Before(r.end)
}

func (r *run) tcpWorker(w *worker, s *sock) error {
	req, resp := r.cfg.RequestSize, r.cfg.ResponseSize
	buf := make([]byte, min(resp, chunk))
	if s.detached() {
		return r.tcpHot(w, s, buf)
	}
	if err := s.c.SetDeadline(r.end); err != nil {
		return err
	}
	for !w.isStopped() {
		t0 := time.Now()
		err := writeN(s.c, req)
		if err == nil {
			err = readN(s.c, buf, resp)
		}
		t1 := time.Now()
		if err != nil {
			if r.over(w) {
				return nil
			}
			return fmt.Errorf("rr tcp: %w", err)
		}
		r.add(w, t1, t1.Sub(t0))
	}
	return nil
}

// hotFail turns a hot call's error into the worker's: nil when the run is
// over (its end, or a stop's shutdown).
func (r *run) hotFail(w *worker, what string, e syscall.Errno) error {
	if r.over(w) {
		return nil
	}
	return fmt.Errorf("rr %s: %w", what, os.NewSyscallError("read/write", e))
}

func (r *run) udpWorker(w *worker, s *sock) error {
	if s.detached() {
		return r.udpHot(w, s)
	}
	req, resp := r.cfg.RequestSize, r.cfg.ResponseSize
	out := make([]byte, req)
	in := make([]byte, descriptors.MaxUDPPayload+1)
	if req >= 4 {
		binary.BigEndian.PutUint32(out, uint32(resp))
	}
	useSeq := req >= 8 && resp >= 8
	var seq uint32
	for !w.isStopped() {
		seq++
		if useSeq {
			binary.BigEndian.PutUint32(out[4:], seq)
		}
		t0 := time.Now()
		if err := s.c.SetReadDeadline(minTime(t0.Add(r.cfg.Timeout), r.end)); err != nil {
			return err
		}
		if _, err := s.c.Write(out); err != nil {
			if r.over(w) {
				return nil
			}
			return r.udpSendErr(err)
		}
		for {
			n, err := s.c.Read(in)
			t1 := time.Now()
			if errors.Is(err, os.ErrDeadlineExceeded) && !r.over(w) {
				r.addLost(w, t1)
				break
			}
			if err != nil {
				if r.over(w) {
					return nil
				}
				return r.udpSendErr(err)
			}
			if n == resp && (!useSeq || binary.BigEndian.Uint32(in[4:]) == seq) {
				r.add(w, t1, t1.Sub(t0))
				break
			}
			// A late answer to a request counted as lost: wait for this
			// one's for the rest of the timeout.
		}
	}
	return nil
}

func (r *run) udpSendErr(err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("rr udp: %s refused (is cnperf serve rr running there?): %w", r.cfg.Addr, err)
	}
	return fmt.Errorf("rr udp: %s: %w", r.cfg.Addr, err)
}

// drainConn discards the datagrams queued on c (late answers), when c
// gives access to its socket.
func drainConn(c net.Conn, buf []byte) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Read(func(fd uintptr) bool {
		drainFd(fd, buf)
		return true
	})
}

func (r *run) crrWorker(ctx context.Context, w *worker) error {
	if r.cfg.Dial == nil {
		if to, ok := r.crrTarget(); ok {
			return r.crrHot(w, to)
		}
	}
	req, resp := r.cfg.RequestSize, r.cfg.ResponseSize
	first := make([]byte, helloLen+min(req, chunk))
	hello{flagOnce, uint32(req), uint32(resp)}.put(first)
	rest := req - (len(first) - helloLen)
	buf := make([]byte, min(resp, chunk))
	dctx, cancel := context.WithDeadline(ctx, r.end)
	defer cancel()
	var one [1]byte
	for !w.isStopped() {
		t0 := time.Now()
		c, err := r.dial(dctx, "tcp", r.cfg.Addr)
		if err != nil {
			if r.over(w) || dctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("rr crr: connect to %s: %w", r.cfg.Addr, err)
		}
		s := &sock{c: c, fd: -1}
		if !w.setSock(s) {
			c.Close()
			return nil
		}
		_ = c.SetDeadline(minTime(t0.Add(r.cfg.Timeout), r.end))
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		_, err = c.Write(first)
		if err == nil && rest > 0 {
			err = writeN(c, rest)
		}
		if err == nil {
			err = readN(c, buf, resp)
		}
		t1 := time.Now()
		if err != nil {
			s.close()
			if r.over(w) {
				return nil
			}
			return fmt.Errorf("rr crr: %w", err)
		}
		r.add(w, t1, t1.Sub(t0))
		// The server closes first: wait for its FIN, so this side does
		// not keep the port in TIME_WAIT.
		_, _ = c.Read(one[:])
		if r.measured(t1.Sub(r.start)) {
			w.tcp.ReadConn(c)
		}
		s.close()
	}
	return nil
}
