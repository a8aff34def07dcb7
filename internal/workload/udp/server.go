package udp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/udpseq"
)

// Listener defaults.
const (
	DefaultGrace       = 250 * time.Millisecond
	DefaultIdleTimeout = 30 * time.Second
	maxControlLine     = 64 << 10
	readBuffer         = 8 << 20 // asked for; the kernel caps it at rmem_max
	// maxControlConns bounds the control connections served at once
	// besides those of the tests that run (with one test at a time, the
	// others are told busy or are idle); beyond it, a new connection is
	// told busy too and closed.
	maxControlConns = 64
	// maxRefusing bounds the connections over maxControlConns being told
	// the listener is busy, each for at most refuseTimeout; beyond it, a
	// new connection is closed at once.
	maxRefusing   = 16
	refuseTimeout = 2 * time.Second
)

// Control protocol: one JSON object per line over TCP. The client sends
// {"op":"start",...}, the listener answers {"test_id":N}; the client sends
// datagrams carrying N, then {"op":"stop","sent":S} and gets {"report":...}.
// Any failure is answered with {"error":"..."}.
type request struct {
	Op       string        `json:"op"`
	Workload string        `json:"workload,omitempty"`
	Size     int           `json:"size,omitempty"`
	Interval time.Duration `json:"interval_ns,omitempty"`
	Sent     int64         `json:"sent,omitempty"`
}

type response struct {
	Error  string  `json:"error,omitempty"`
	TestID uint32  `json:"test_id,omitempty"`
	Report *Report `json:"report,omitempty"`
}

// Server is the listener of both workloads: it serves up to Sessions
// clients at once (by default one), each a session measured on its own: a
// datagram goes to the session its header names. A client that disappears
// (its control connection closes, or neither it nor its datagrams are
// heard of for IdleTimeout) ends its session, and the server goes on
// serving. The zero value uses the
// defaults.
type Server struct {
	Grace       time.Duration // after stop, how long to wait for datagrams in flight
	IdleTimeout time.Duration
	Sessions    int                           // clients measured at once (sessions), 1 (0) to serverkit.MaxTests; one more is told busy
	Logf        func(format string, a ...any) // optional

	mu     sync.Mutex
	active map[uint32]*test         // running tests by id
	bySrc  map[netip.AddrPort]*test // running tests by their datagrams' source
	lastID uint32

	invalid atomic.Int64 // corrupt datagrams (short, wrong magic) outside of any test
	stray   atomic.Int64 // well-formed datagrams of no running test
}

type test struct {
	id       uint32
	workload string
	origin   time.Time
	src      netip.AddrPort // source of its first datagram (under Server.mu)

	mu     sync.Mutex
	meter  *Meter
	end    time.Duration // set at stop: later arrivals count at end
	ending bool
	done   bool      // reported: the meter is no longer touched
	heard  time.Time // last datagram or control message
	// srcSeen: its first datagram has been read (its source noted).
	srcSeen bool
}

func (s *Server) sessions() int { return max(s.Sessions, 1) }

func (s *Server) logf(format string, a ...any) {
	if s.Logf != nil {
		s.Logf(format, a...)
	}
}

// Serve answers control connections on ln and measures datagrams on pc
// (serverkit.ListenPair opens both on one port) until ctx is cancelled
// (then it returns nil) or ln fails. It closes both.
func (s *Server) Serve(ctx context.Context, pc net.PacketConn, ln net.Listener) error {
	if u, ok := pc.(*net.UDPConn); ok {
		_ = u.SetReadBuffer(readBuffer)
	}
	if s.Sessions != 0 {
		if err := serverkit.CheckTests(s.Sessions); err != nil {
			ln.Close()
			pc.Close()
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		ln.Close()
		pc.Close()
	}()
	go func() {
		defer wg.Done()
		s.receive(ctx, pc)
	}()
	// Each running test holds its control connection.
	conns := serverkit.NewGate(maxControlConns + s.sessions() - 1)
	refusing := serverkit.NewGate(maxRefusing)
	err := conns.Serve(ctx, ln.Accept, s.logf, "control connections", s.control, func(c net.Conn) {
		if !refusing.Enter() {
			c.Close() // too many even to be told: closed at once
			return
		}
		wg.Go(func() {
			defer refusing.Leave()
			refuse(ctx, c, conns.Cap())
		})
	})
	if err != nil {
		err = fmt.Errorf("accept: %w", err)
	}
	cancel()
	wg.Wait()
	return err
}

func (s *Server) receive(ctx context.Context, pc net.PacketConn) {
	buf := make([]byte, 1<<16)
	read := readFunc(pc)
	for {
		n, from, err := read(buf)
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. a truncated or refused datagram
		}
		h, herr := ParseHeader(buf[:n])
		if herr != nil {
			s.addInvalid(from)
			continue
		}
		s.mu.Lock()
		t := s.active[h.TestID]
		s.mu.Unlock()
		if t == nil {
			s.stray.Add(1)
			continue
		}
		t.mu.Lock()
		if t.done {
			t.mu.Unlock()
			s.stray.Add(1)
			continue
		}
		at := now.Sub(t.origin)
		if t.ending && at > t.end {
			at = t.end
		}
		t.meter.Add(at, h.Seq, n, time.Duration(now.UnixNano()-h.SendNS))
		t.heard = now
		first := !t.srcSeen
		t.srcSeen = true
		t.mu.Unlock()
		if first {
			s.noteSource(t, from)
		}
	}
}

// readFunc reads a datagram and its source from pc, without an allocation
// per datagram where pc is a *net.UDPConn.
func readFunc(pc net.PacketConn) func([]byte) (int, netip.AddrPort, error) {
	if u, ok := pc.(*net.UDPConn); ok {
		return u.ReadFromUDPAddrPort
	}
	return func(b []byte) (int, netip.AddrPort, error) {
		n, a, err := pc.ReadFrom(b)
		var from netip.AddrPort
		if ua, ok := a.(*net.UDPAddr); ok {
			from = ua.AddrPort()
		}
		return n, from, err
	}
}

// noteSource remembers where t's datagrams come from, so that corrupt
// datagrams from there are charged to t.
func (s *Server) noteSource(t *test, from netip.AddrPort) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[t.id] != t || !from.IsValid() {
		return
	}
	if _, taken := s.bySrc[from]; taken {
		return
	}
	if s.bySrc == nil {
		s.bySrc = map[netip.AddrPort]*test{}
	}
	t.src = from
	s.bySrc[from] = t
}

// addInvalid counts a corrupt datagram: in the test whose datagrams come
// from the same source, else in the only test running (as with one test at
// a time), else in the server's count.
func (s *Server) addInvalid(from netip.AddrPort) {
	s.mu.Lock()
	t := s.bySrc[from]
	if t == nil && len(s.active) == 1 {
		for _, t = range s.active {
		}
	}
	s.mu.Unlock()
	if t != nil {
		t.mu.Lock()
		done := t.done
		if !done {
			t.meter.Invalid()
		}
		t.mu.Unlock()
		if !done {
			return
		}
	}
	s.invalid.Add(1)
}

// control serves one control connection: it reads request lines itself
// (no goroutine that could outlive the connection) with a read deadline
// at the idle timeout, so an idle connection costs no wake-ups.
func (s *Server) control(ctx context.Context, c net.Conn) {
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	idle := serverkit.OrDefault(s.IdleTimeout, DefaultIdleTimeout)
	reply := serverkit.Replier[response](c)
	var cur *test
	heard := time.Now()
	// lastHeard is the last sign of life: a control line or the test's
	// last datagram.
	lastHeard := func() time.Time {
		last := heard
		if cur != nil {
			cur.mu.Lock()
			if cur.heard.After(last) {
				last = cur.heard
			}
			cur.mu.Unlock()
		}
		return last
	}
	defer func() {
		if cur != nil && s.end(cur) {
			s.logf("test %d (%q) from %s ended: client gone", cur.id, cur.workload, c.RemoteAddr())
		}
	}()
	br := bufio.NewReaderSize(c, 4096)
	var line []byte
	for {
		_ = c.SetReadDeadline(lastHeard().Add(idle))
		if ctx.Err() != nil {
			return
		}
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > maxControlLine {
			reply(response{Error: fmt.Sprintf("bad request: a line longer than %d bytes", maxControlLine)})
			return
		}
		line = append(line, frag...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil && time.Since(lastHeard()) < idle {
				continue // the test's datagrams kept it alive
			}
			return
		}
		heard = time.Now()
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			reply(response{Error: "bad request: " + err.Error()})
			return
		}
		line = line[:0]
		switch req.Op {
		case "start":
			if cur != nil {
				reply(response{Error: "a test is already running on this connection"})
				return
			}
			if err := req.check(); err != nil {
				reply(response{Error: "bad request: " + err.Error()})
				return
			}
			t := s.begin(req)
			if t == nil {
				reply(response{Error: s.busyError()})
				return
			}
			cur = t
			s.logf("test %d (%q, %d-byte datagrams) from %s started", t.id, t.workload, req.Size, c.RemoteAddr())
			if !reply(response{TestID: t.id}) {
				return
			}
		case "stop":
			if cur == nil {
				reply(response{Error: "stop without a running test"})
				return
			}
			if req.Sent < 0 {
				reply(response{Error: fmt.Sprintf("bad request: sent %d: must be >= 0", req.Sent)})
				return
			}
			rep, err := s.finish(ctx, cur, req.Sent)
			t := cur
			cur = nil
			if err != nil {
				reply(response{Error: "bad request: " + err.Error()})
				return
			}
			if ctx.Err() != nil {
				return
			}
			s.logf("test %d (%q) from %s: %d of %d datagrams received, %d lost, %d out of order",
				t.id, t.workload, c.RemoteAddr(), rep.Total.Packets, rep.Sent, rep.Total.Lost, rep.Total.OutOfOrder)
			if !reply(response{Report: &rep}) {
				return
			}
		default:
			reply(response{Error: fmt.Sprintf("unknown op %q", serverkit.Clip(req.Op))})
			return
		}
	}
}

// check refuses a start request's implausible fields.
func (r request) check() error {
	switch {
	case r.Workload != WorkloadJitter && r.Workload != WorkloadDatagram:
		return fmt.Errorf("workload %q: want %s or %s", serverkit.Clip(r.Workload), WorkloadJitter, WorkloadDatagram)
	case r.Size != 0 && (r.Size < descriptors.UDPHeaderSize || r.Size > descriptors.MaxUDPPayload):
		return fmt.Errorf("size %d: must be between %d and %d bytes", r.Size, descriptors.UDPHeaderSize, descriptors.MaxUDPPayload)
	case r.Interval != 0 && (r.Interval < workload.MinInterval || r.Interval > descriptors.UDPMaxInterval):
		return fmt.Errorf("interval %s: must be 0 or in [%s, %s]", r.Interval, workload.MinInterval, descriptors.UDPMaxInterval)
	}
	return nil
}

// begin makes req's test a running one; nil when as many run as the
// server serves at once.
func (s *Server) begin(req request) *test {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.active) >= s.sessions() {
		return nil
	}
	// A fresh id: neither a running test's nor the last one's, whose
	// datagrams may still be in flight.
	id := rand.Uint32()
	for id == 0 || id == s.lastID || s.active[id] != nil {
		id = rand.Uint32()
	}
	now := time.Now()
	t := &test{id: id, workload: req.Workload, origin: now, heard: now, meter: NewMeter(req.Interval)}
	if s.active == nil {
		s.active = map[uint32]*test{}
	}
	s.active[id] = t
	s.lastID = id
	return t
}

// end removes t from the running tests; false if it was not running.
func (s *Server) end(t *test) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[t.id] != t {
		return false
	}
	delete(s.active, t.id)
	if t.src.IsValid() && s.bySrc[t.src] == t {
		delete(s.bySrc, t.src)
	}
	return true
}

// refuse tells a control connection over the cap that the listener is
// busy, in the protocol's words, and lets the client close first: closed
// with the client's request unread, the connection would be reset, and
// the client would see "connection reset by peer" instead of the answer.
func refuse(ctx context.Context, c net.Conn, open int) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(refuseTimeout))
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	_ = json.NewEncoder(c).Encode(response{Error: fmt.Sprintf("busy: %d control connections are open, the most it serves at once", open)})
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, maxControlLine))
}

func (s *Server) busyError() string {
	if s.sessions() == 1 {
		return "busy: another test is running"
	}
	return fmt.Sprintf("busy: %d tests are running", s.sessions())
}

// finish ends t: its clock stops now, datagrams in flight get Grace to land.
// A sent count implausibly far above what arrived is an error.
func (s *Server) finish(ctx context.Context, t *test, sent int64) (Report, error) {
	t.mu.Lock()
	t.end = time.Since(t.origin)
	t.ending = true
	t.mu.Unlock()
	timer := time.NewTimer(serverkit.OrDefault(s.Grace, DefaultGrace))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		s.end(t)
		return Report{}, nil
	}
	s.end(t)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if next := t.meter.tr.Next(); uint64(sent) > next && uint64(sent)-next > udpseq.MaxJump {
		return Report{}, fmt.Errorf("sent %d: more than %d beyond the %d datagrams seen", sent, uint64(udpseq.MaxJump), next)
	}
	return t.meter.Report(t.end, sent), nil
}
