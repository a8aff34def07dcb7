package udp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnperf/cnperf/internal/workload/udpseq"
)

// Listener defaults.
const (
	DefaultGrace       = 250 * time.Millisecond
	DefaultIdleTimeout = 30 * time.Second
	MinInterval        = 10 * time.Millisecond
	MaxInterval        = time.Hour
	maxControlLine     = 64 << 10
	readBuffer         = 8 << 20 // asked for; the kernel caps it at rmem_max
	// maxControlConns bounds the control connections served at once (one
	// test runs at a time; the others are told busy or are idle); beyond
	// it, a new connection is closed at once.
	maxControlConns = 64
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

// Server is the listener of both workloads: it serves one test at a time.
// A client that disappears (its control connection closes, or neither it
// nor its datagrams are heard of for IdleTimeout) ends its test, and the
// server goes on serving. The zero value uses the defaults.
type Server struct {
	Grace       time.Duration // after stop, how long to wait for datagrams in flight
	IdleTimeout time.Duration
	Logf        func(format string, a ...any) // optional

	active  atomic.Pointer[test]
	invalid atomic.Int64 // corrupt datagrams (short, wrong magic) outside of any test
	stray   atomic.Int64 // well-formed datagrams of no running test
	lastID  atomic.Uint32
	refused atomic.Int64 // control connections closed at once: too many
	lastLog atomic.Int64 // unix ns of the last "too many connections" line
}

type test struct {
	id       uint32
	workload string
	origin   time.Time

	mu     sync.Mutex
	meter  *Meter
	end    time.Duration // set at stop: later arrivals count at end
	ending bool
	done   bool      // reported: the meter is no longer touched
	heard  time.Time // last datagram or control message
}

func (s *Server) logf(format string, a ...any) {
	if s.Logf != nil {
		s.Logf(format, a...)
	}
}

// Listen binds addr's port for both the control (TCP) and the data (UDP)
// sockets; with port 0 both get the same free port.
func Listen(addr string) (net.PacketConn, net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, err
	}
	for try := 0; ; try++ {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, err
		}
		p := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		pc, err := net.ListenPacket("udp", net.JoinHostPort(host, p))
		if err == nil {
			if u, ok := pc.(*net.UDPConn); ok {
				_ = u.SetReadBuffer(readBuffer)
			}
			return pc, ln, nil
		}
		ln.Close()
		if port != "0" || try == 10 {
			return nil, nil, err
		}
	}
}

// Serve answers control connections on ln and measures datagrams on pc
// until ctx is cancelled (then it returns nil) or ln fails. It closes both.
func (s *Server) Serve(ctx context.Context, pc net.PacketConn, ln net.Listener) error {
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
	var err error
	conns := make(chan struct{}, maxControlConns)
	for {
		c, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("accept: %w", aerr)
			}
			break
		}
		select {
		case conns <- struct{}{}:
		default:
			c.Close()
			n := s.refused.Add(1)
			if now := time.Now().UnixNano(); now-s.lastLog.Load() > int64(time.Second) {
				s.lastLog.Store(now)
				s.logf("too many control connections (%d at once): %d refused so far", maxControlConns, n)
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-conns }()
			s.control(ctx, c)
		}()
	}
	cancel()
	wg.Wait()
	return err
}

func (s *Server) receive(ctx context.Context, pc net.PacketConn) {
	buf := make([]byte, 1<<16)
	for {
		n, _, err := pc.ReadFrom(buf)
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. a truncated or refused datagram
		}
		h, herr := ParseHeader(buf[:n])
		t := s.active.Load()
		switch {
		case herr != nil && t != nil:
			t.mu.Lock()
			if !t.done {
				t.meter.Invalid()
			} else {
				s.invalid.Add(1)
			}
			t.mu.Unlock()
		case herr != nil:
			s.invalid.Add(1)
		case t == nil || h.TestID != t.id:
			s.stray.Add(1)
		default:
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
			t.mu.Unlock()
		}
	}
}

// control serves one control connection: it reads request lines itself
// (no goroutine that could outlive the connection) with a read deadline
// at the idle timeout, so an idle connection costs no wake-ups.
func (s *Server) control(ctx context.Context, c net.Conn) {
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	idle := s.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	enc := json.NewEncoder(c)
	reply := func(r response) bool {
		_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		return enc.Encode(r) == nil
	}
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
		if cur != nil && s.active.CompareAndSwap(cur, nil) {
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
				reply(response{Error: "busy: another test is running"})
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
			reply(response{Error: fmt.Sprintf("unknown op %q", clip(req.Op))})
			return
		}
	}
}

// check refuses a start request's implausible fields.
func (r request) check() error {
	switch {
	case r.Workload != WorkloadJitter && r.Workload != WorkloadDatagram:
		return fmt.Errorf("workload %q: want %s or %s", clip(r.Workload), WorkloadJitter, WorkloadDatagram)
	case r.Size != 0 && (r.Size < HeaderSize || r.Size > MaxSize):
		return fmt.Errorf("size %d: must be between %d and %d bytes", r.Size, HeaderSize, MaxSize)
	case r.Interval != 0 && (r.Interval < MinInterval || r.Interval > MaxInterval):
		return fmt.Errorf("interval %s: must be 0 or in [%s, %s]", r.Interval, MinInterval, MaxInterval)
	}
	return nil
}

// clip shortens a client's string for an error or a log line (which quote
// it, so that it cannot forge a line).
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// begin makes req's test the running one; nil when another runs.
func (s *Server) begin(req request) *test {
	id := rand.Uint32()
	for id == 0 || id == s.lastID.Load() {
		id = rand.Uint32()
	}
	now := time.Now()
	t := &test{id: id, workload: req.Workload, origin: now, heard: now, meter: NewMeter(req.Interval)}
	if !s.active.CompareAndSwap(nil, t) {
		return nil
	}
	s.lastID.Store(id)
	return t
}

// finish ends t: its clock stops now, datagrams in flight get Grace to land.
// A sent count implausibly far above what arrived is an error.
func (s *Server) finish(ctx context.Context, t *test, sent int64) (Report, error) {
	t.mu.Lock()
	t.end = time.Since(t.origin)
	t.ending = true
	t.mu.Unlock()
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		s.active.CompareAndSwap(t, nil)
		return Report{}, nil
	}
	s.active.CompareAndSwap(t, nil)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if next := t.meter.tr.Next(); uint64(sent) > next && uint64(sent)-next > udpseq.MaxJump {
		return Report{}, fmt.Errorf("sent %d: more than %d beyond the %d datagrams seen", sent, uint64(udpseq.MaxJump), next)
	}
	return t.meter.Report(t.end, sent), nil
}
