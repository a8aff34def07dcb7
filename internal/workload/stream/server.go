package stream

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnperf/cnperf/internal/workload/udpseq"
)

const (
	// tcpReadBuffer is one read's size, iperf3's default block. Reads from
	// one loop over all streams (readTCPStreams) keep each read short of
	// its buffer and the data warm in cache; see docs/benchmarks.md.
	tcpReadBuffer = 128 << 10
	udpSocketBuf  = 4 << 20
)

// Server receives stream tests, one at a time, on a TCP port (control and
// TCP data) and the UDP port of the same number.
type Server struct {
	ln   net.Listener
	udp  *net.UDPConn
	log  io.Writer
	logM sync.Mutex
	// slot is held by the running test from its request until its answer
	// is sent. answering is set while that answer goes out: a request
	// arriving then waits for the slot instead of being told busy.
	slot      chan struct{}
	answering atomic.Bool
	cur       atomic.Pointer[test]
	handlers  chan struct{} // one per connection being read (maxHandlers)
	refused   atomic.Int64  // connections closed at once: too many
	lastLog   atomic.Int64  // unix ns of the last "too many connections" line
}

// Listen opens the server's TCP listener and UDP socket on addr. With port
// 0, both get the same free port number.
func Listen(addr string, log io.Writer) (*Server, error) {
	if log == nil {
		log = io.Discard
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %q: %w", addr, err)
	}
	for try := 0; ; try++ {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			ln.Close()
			if (port == "0" || port == "") && try < 20 {
				continue // that port is taken over UDP: pick another
			}
			return nil, fmt.Errorf("listen on %s/udp: %w", addr, err)
		}
		udp := pc.(*net.UDPConn)
		_ = udp.SetReadBuffer(udpSocketBuf) // capped by net.core.rmem_max
		return &Server{ln: ln, udp: udp, log: log, slot: make(chan struct{}, 1), handlers: make(chan struct{}, maxHandlers)}, nil
	}
}

// Addr is the address the server listens on (TCP; UDP has the same port).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve accepts tests until ctx ends, then closes the listeners, aborts a
// running test and returns nil. Errors of one test are logged, never
// returned.
func (s *Server) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { s.ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		s.udp.Close()
	}()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			s.logf("accept: %v", err) // e.g. out of file descriptors: wait and go on
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		select {
		case s.handlers <- struct{}{}:
		default:
			// As many connections as a test can use are being read:
			// refuse more rather than hold their buffers.
			c.Close()
			n := s.refused.Add(1)
			if now := time.Now().UnixNano(); now-s.lastLog.Load() > int64(time.Second) {
				s.lastLog.Store(now)
				s.logf("too many connections (%d at once): %d refused so far", maxHandlers, n)
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-s.handlers }()
			s.handle(ctx, c)
		}()
	}
}

// acquire takes the test slot for a new test. It waits for a test that is
// sending its answer (a client's next test may arrive before the server
// has let go of the last one), and no longer than wait; false: busy.
func (s *Server) acquire(ctx context.Context, wait time.Duration) bool {
	select {
	case s.slot <- struct{}{}:
		return true
	default:
	}
	if !s.answering.Load() {
		return false
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case s.slot <- struct{}{}:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

func (s *Server) release() {
	s.answering.Store(false)
	<-s.slot
}

func (s *Server) logf(format string, a ...any) {
	s.logM.Lock()
	defer s.logM.Unlock()
	fmt.Fprintf(s.log, "cnperf serve stream: "+format+"\n", a...)
}

// handle tells a control connection from a data connection by its first byte.
func (s *Server) handle(ctx context.Context, c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(controlTimeout))
	unblock := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer unblock()
	var first [1]byte
	if _, err := io.ReadFull(c, first[:]); err != nil {
		c.Close()
		return
	}
	switch first[0] {
	case dataMagic:
		s.handleData(c)
	case '{':
		defer c.Close()
		s.handleControl(ctx, c, first[:])
	default:
		c.Close()
	}
}

// handleData hands a data connection to the running test, or closes it.
func (s *Server) handleData(c net.Conn) {
	var h [dataHeaderLen - 1]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		c.Close()
		return
	}
	t := s.cur.Load()
	if t == nil || !bytes.Equal(h[:cookieLen], t.cookie[:]) || !t.addConn(int(binary.BigEndian.Uint32(h[cookieLen:])), c) {
		c.Close()
	}
}

func (s *Server) handleControl(ctx context.Context, c net.Conn, first []byte) {
	peer := c.RemoteAddr().String()
	dec := json.NewDecoder(io.MultiReader(bytes.NewReader(first), io.LimitReader(c, maxControlMessage)))
	enc := json.NewEncoder(c)
	reply := func(m message) {
		_ = c.SetWriteDeadline(time.Now().Add(controlTimeout))
		_ = enc.Encode(m)
	}
	cfg, cookie, err := decodeTest(dec)
	if err != nil {
		reply(message{Type: "error", Error: err.Error()})
		s.logf("%s: %v", peer, err)
		return
	}
	if !s.acquire(ctx, controlTimeout) {
		reply(message{Type: "error", Error: ErrBusy.Error(), Busy: true})
		s.logf("%s: refused: busy", peer)
		return
	}
	// The slot is let go only once the answer is out, so that no two
	// tests' records and answers are ever held at once.
	defer s.release()
	s.logf("%s: %s test, %d stream(s), %s + %s warm-up", peer, cfg.Protocol, cfg.Parallel, cfg.Duration, cfg.Omit)
	t := newTest(cfg, cookie, s.udp)
	s.cur.Store(t)
	// The test ends with the server: closing the control connection
	// interrupts whatever the test waits for.
	stop := context.AfterFunc(ctx, func() { c.Close() })
	res, err := t.run(ctx, c, dec, reply)
	stop()
	t.closeConns()
	s.cur.Store(nil)
	s.answering.Store(true)
	if err != nil {
		reply(message{Type: "error", Error: err.Error()})
		s.logf("%s: test aborted: %v", peer, err)
		return
	}
	reply(res)
	var total int64
	for _, st := range res.Streams {
		for _, b := range st.Bytes {
			total += b
		}
	}
	s.logf("%s: test done: received %d bytes", peer, total)
}

// decodeTest reads a test request: its configuration (with defaults) and
// cookie, or a one-line error.
func decodeTest(dec *json.Decoder) (Config, [cookieLen]byte, error) {
	var req message
	if err := dec.Decode(&req); err != nil {
		return Config{}, [cookieLen]byte{}, fmt.Errorf("bad request: %v", err)
	}
	if req.Type != "test" {
		return Config{}, [cookieLen]byte{}, fmt.Errorf("bad request: type %q, want test", clip(req.Type))
	}
	cfg := req.config()
	if err := cfg.Validate(); err != nil {
		return Config{}, [cookieLen]byte{}, fmt.Errorf("bad request: %v", err)
	}
	cookie, err := parseCookie(req.Cookie)
	if err != nil {
		return Config{}, [cookieLen]byte{}, fmt.Errorf("bad request: %v", err)
	}
	return cfg.withDefaults(), cookie, nil
}

// clip shortens a client's string for an error or a log line (which quote
// it with %q, so it cannot forge a line).
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// test is the server's side of one test.
type test struct {
	cfg    Config
	cookie [cookieLen]byte
	id     uint32
	edges  []time.Duration
	udp    *net.UDPConn

	mu      sync.Mutex
	conns   []net.Conn
	n       int
	closed  bool
	allConn chan struct{} // closed when all TCP data connections arrived

	recv     []*receiver
	deadline atomic.Int64 // unix ns: when the TCP read loop stops
}

func newTest(cfg Config, cookie [cookieLen]byte, udp *net.UDPConn) *test {
	t := &test{
		cfg:     cfg,
		cookie:  cookie,
		id:      binary.BigEndian.Uint32(cookie[:4]),
		edges:   boundaries(cfg.Omit, cfg.Duration, serverInterval(cfg)),
		udp:     udp,
		conns:   make([]net.Conn, cfg.Parallel),
		allConn: make(chan struct{}),
	}
	bins := len(t.edges) - 1
	for range cfg.Parallel {
		r := &receiver{bytes: make([]int64, bins)}
		// A forged sequence number far ahead is ignored, not counted as
		// billions lost.
		r.seq.MaxJump = udpseq.MaxJump
		if cfg.Protocol == "udp" {
			r.packets = make([]int64, bins)
			r.lostAt = make([]uint64, bins)
			r.oooAt = make([]uint64, bins)
		}
		t.recv = append(t.recv, r)
	}
	return t
}

// addConn takes data connection c as stream i.
func (t *test) addConn(i int, c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.cfg.Protocol != "tcp" || i < 0 || i >= len(t.conns) || t.conns[i] != nil {
		return false
	}
	t.conns[i] = c
	t.n++
	if t.n == len(t.conns) {
		close(t.allConn)
	}
	return true
}

func (t *test) closeConns() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for _, c := range t.conns {
		if c != nil {
			c.Close()
		}
	}
}

func (t *test) dataDeadline() time.Time { return time.Unix(0, t.deadline.Load()) }

func (t *test) setDataDeadline(d time.Time) {
	t.deadline.Store(d.UnixNano())
	if t.cfg.Protocol == "udp" {
		_ = t.udp.SetReadDeadline(d)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.conns {
		if c != nil {
			_ = c.SetReadDeadline(d)
		}
	}
}

func (t *test) run(ctx context.Context, c net.Conn, dec *json.Decoder, reply func(message)) (message, error) {
	reply(message{Type: "accept"})
	_ = c.SetReadDeadline(time.Now().Add(controlTimeout))
	var m message
	if err := dec.Decode(&m); err != nil {
		return message{}, fmt.Errorf("waiting for start: %w", err)
	}
	if m.Type != "start" {
		return message{}, fmt.Errorf("got %q, want start", clip(m.Type))
	}
	if t.cfg.Protocol == "tcp" {
		timer := time.NewTimer(controlTimeout)
		defer timer.Stop()
		select {
		case <-t.allConn:
		case <-ctx.Done():
			return message{}, ctx.Err()
		case <-timer.C:
			t.mu.Lock()
			n := t.n
			t.mu.Unlock()
			return message{}, fmt.Errorf("only %d of %d data connections arrived", n, t.cfg.Parallel)
		}
	}
	t0 := time.Now()
	total := t.cfg.Omit + t.cfg.Duration
	t.setDataDeadline(t0.Add(total + endGrace))
	var wg sync.WaitGroup
	if t.cfg.Protocol == "tcp" {
		wg.Go(func() { t.readTCPStreams(t0) })
	} else {
		wg.Go(func() { t.readUDP(t0) })
	}
	abort := func(err error) (message, error) {
		t.closeConns()
		t.setDataDeadline(time.Unix(1, 0))
		wg.Wait()
		return message{}, err
	}
	reply(message{Type: "started"})
	_ = c.SetReadDeadline(t0.Add(total + endGrace))
	if err := dec.Decode(&m); err != nil {
		return abort(fmt.Errorf("client gone: %w", err))
	}
	if m.Type != "done" {
		return abort(fmt.Errorf("got %q, want done", clip(m.Type)))
	}
	// The client has closed its data connections: read what is in flight.
	if t.cfg.Protocol == "tcp" {
		t.setDataDeadline(time.Now().Add(endGrace))
	} else {
		t.setDataDeadline(time.Now().Add(udpDrain))
	}
	wg.Wait()
	return t.results(time.Duration(m.ElapsedNS), m.Sent), nil
}

// receiver is what the server records of one stream. Only its reader
// goroutine touches it until the readers are done.
type receiver struct {
	bytes, packets []int64
	lostAt, oooAt  []uint64 // UDP: cumulative lost and out of order at the end of each bin
	cur            int
	last           time.Duration  // arrival of the last data
	seq            udpseq.Tracker // zero: like iperf3, a duplicate counts as out of order
}

// seqCounts are the stream's lost and out-of-order datagrams so far.
func (r *receiver) seqCounts() (lost, ooo uint64) {
	c := r.seq.Counts()
	return uint64(c.Lost), uint64(c.OutOfOrder)
}

// bin returns the bin of elapsed time el (monotonic per receiver).
func (r *receiver) bin(el time.Duration, edges []time.Duration) int {
	for r.cur < len(r.bytes)-1 && el >= edges[r.cur+1] {
		if r.lostAt != nil {
			r.lostAt[r.cur], r.oooAt[r.cur] = r.seqCounts()
		}
		r.cur++
	}
	return r.cur
}

func (r *receiver) readTCP(c net.Conn, t0 time.Time, edges []time.Duration) {
	buf := make([]byte, tcpReadBuffer)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			el := time.Since(t0)
			r.bytes[r.bin(el, edges)] += int64(n)
			r.last = el
		}
		if err != nil {
			return
		}
	}
}

func (t *test) readUDP(t0 time.Time) {
	buf := make([]byte, 64<<10)
	for {
		n, err := t.udp.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && !ne.Timeout() && !errors.Is(err, net.ErrClosed) {
				continue // e.g. an ICMP error queued on the socket
			}
			return
		}
		if n < udpHeaderLen || binary.BigEndian.Uint32(buf[16:20]) != t.id {
			continue // not this test's
		}
		st := binary.BigEndian.Uint32(buf[20:24])
		if st >= uint32(len(t.recv)) {
			continue
		}
		r := t.recv[st]
		el := time.Since(t0)
		k := r.bin(el, t.edges)
		if r.seq.Observe(binary.BigEndian.Uint64(buf[0:8])).Kind == udpseq.Rejected {
			continue
		}
		r.bytes[k] += int64(n)
		r.packets[k]++
		r.last = el
	}
}

// results cuts the bins at the sender's end (elapsed; earlier than planned
// if the client was interrupted) and folds later arrivals into the last bin.
func (t *test) results(elapsed time.Duration, sent []uint64) message {
	nb := len(t.edges) - 1
	last := nb - 1
	if elapsed > 0 {
		for last > 0 && t.edges[last] >= elapsed {
			last--
		}
	}
	end := min(elapsed, t.edges[nb])
	if elapsed <= 0 {
		end = t.edges[nb]
	}
	m := message{Type: "results"}
	for i, r := range t.recv {
		end = max(end, r.last)
		b := receiverBins{Bytes: fold(r.bytes, last)}
		if r.lostAt != nil {
			if i < len(sent) && sent[i]-r.seq.Next() <= udpseq.MaxJump {
				r.seq.Finish(sent[i]) // an implausible count is ignored
			}
			for k := r.cur; k < nb; k++ {
				r.lostAt[k], r.oooAt[k] = r.seqCounts()
			}
			b.Packets = fold(r.packets, last)
			b.Lost = deltas(r.lostAt[:last+1])
			b.Lost[last] = int64(r.lostAt[nb-1]) - prev(r.lostAt, last)
			b.OutOfOrder = deltas(r.oooAt[:last+1])
			b.OutOfOrder[last] = int64(r.oooAt[nb-1]) - prev(r.oooAt, last)
		}
		m.Streams = append(m.Streams, b)
	}
	for k := 0; k <= last; k++ {
		m.Edges = append(m.Edges, t.edges[k].Seconds())
	}
	m.Edges = append(m.Edges, max(end, t.edges[last]).Seconds())
	return m
}

// fold returns v[:last+1] with the values after last added to v[last].
func fold(v []int64, last int) []int64 {
	out := append([]int64(nil), v[:last+1]...)
	for _, x := range v[last+1:] {
		out[last] += x
	}
	return out
}

func deltas(cum []uint64) []int64 {
	out := make([]int64, len(cum))
	for k := range cum {
		out[k] = int64(cum[k]) - prev(cum, k)
	}
	return out
}

func prev(cum []uint64, k int) int64 {
	if k == 0 {
		return 0
	}
	return int64(cum[k-1])
}
