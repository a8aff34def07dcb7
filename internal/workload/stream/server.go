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
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/serverkit"
	"github.com/cnperf/cnperf/internal/workload/udpseq"
)

const (
	// tcpReadBuffer is one read's size, iperf3's default block. Reads from
	// one loop over all streams (readTCPStreams) keep each read short of
	// its buffer and the data warm in cache; see docs/benchmarks.md.
	tcpReadBuffer = 128 << 10
	udpSocketBuf  = 4 << 20
)

// Server receives stream tests, up to its number of tests at once (by
// default one, as iperf3 -s), on a TCP port (control and TCP data) and the
// UDP port of the same number. Each test has its own records: TCP data
// connections join their test by cookie, UDP datagrams by test id.
type Server struct {
	ln      net.Listener
	udp     *net.UDPConn
	udpStop atomic.Bool // the UDP reader's loop (udprecv.go) stops
	// udpFd is the UDP reader's own descriptor (udprecv.go) plus one, 0
	// for none: the stop shuts it down to end its wait (udpMu).
	udpFd int
	udpMu sync.Mutex
	// procs lends each test's raw reader (readOne) a P of its own.
	procs serverkit.Procs
	logf  func(format string, a ...any)
	slots *serverkit.Slots // one per running test
	// running maps a test id (its cookie's first 4 bytes) to the test:
	// a sync.Map, written once per test, so that the UDP reader looks a
	// datagram's test up without a lock.
	running  sync.Map        // uint32 -> *test
	cells    int64           // a test's bin records at most (serverInterval)
	handlers *serverkit.Gate // the connections being read (maxHandlers)
}

// Listen opens the server's TCP listener and UDP socket on addr for up to
// tests tests at once (1 to serverkit.MaxTests). With port 0, both get the same free
// port number.
func Listen(addr string, tests int, log io.Writer) (*Server, error) {
	if err := serverkit.CheckTests(tests); err != nil {
		return nil, err
	}
	ln, udp, err := serverkit.ListenPair(addr)
	if err != nil {
		return nil, err
	}
	_ = udp.SetReadBuffer(udpSocketBuf) // capped by net.core.rmem_max
	s := &Server{ln: ln, udp: udp, logf: serverkit.Logger(log, "cnperf serve stream: "), slots: serverkit.NewSlots(tests),
		// Each further test holds its control connection for its
		// whole run, and one data connection (-P 1) briefly.
		handlers: serverkit.NewGate(maxHandlers + 2*(tests-1)),
		// The records of all tests together stay within
		// maxServerCells; a single test keeps maxBinCells.
		cells: min(maxBinCells, maxServerCells/int64(tests)),
	}
	// One P per raw reader plus one for everything else, never below
	// what the process had when Serve began.
	s.procs.Want = func(held, base int) int { return max(held+1, base) }
	return s, nil
}

// Addr is the address the server listens on (TCP; UDP has the same port).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve accepts tests until ctx ends, then closes the listeners, aborts a
// running test and returns nil. Errors of one test are logged, never
// returned.
func (s *Server) Serve(ctx context.Context) error {
	s.procs.Start()
	stop := context.AfterFunc(ctx, func() { s.ln.Close() })
	defer stop()
	udpDone := make(chan struct{})
	go func() {
		defer close(udpDone)
		s.readUDP()
	}()
	defer func() {
		s.stopUDP()
		s.udp.Close()
		<-udpDone
	}()
	// Beyond as many connections as the tests can use, connections are
	// refused rather than have their buffers held.
	return s.handlers.Serve(ctx, s.ln.Accept, s.logf, "connections", s.handle, nil)
}

// register makes t findable by its id; false if a running test has that id
// (a client reusing a cookie, or one chance in 2^32).
func (s *Server) register(t *test) bool {
	_, taken := s.running.LoadOrStore(t.id, t)
	return !taken
}

func (s *Server) unregister(t *test) { s.running.CompareAndDelete(t.id, t) }

// lookup is the running test with id, or nil.
func (s *Server) lookup(id uint32) *test {
	t, _ := s.running.Load(id)
	tt, _ := t.(*test)
	return tt
}

// handle tells a control connection from a data connection by its first byte.
func (s *Server) handle(ctx context.Context, c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(serverkit.ControlTimeout))
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
	t := s.lookup(binary.BigEndian.Uint32(h[:4]))
	if t == nil || !bytes.Equal(h[:cookieLen], t.cookie[:]) || !t.addConn(int(binary.BigEndian.Uint32(h[cookieLen:])), c) {
		c.Close()
	}
}

func (s *Server) handleControl(ctx context.Context, c net.Conn, first []byte) {
	peer := c.RemoteAddr().String()
	dec := json.NewDecoder(io.MultiReader(bytes.NewReader(first), io.LimitReader(c, maxControlMessage)))
	reply := serverkit.Replier[message](c)
	cfg, cookie, err := decodeTest(dec)
	if err != nil {
		reply(message{Type: "error", Error: err.Error()})
		s.logf("%s: %v", peer, err)
		return
	}
	if !s.slots.Take(ctx, serverkit.ControlTimeout) {
		reply(message{Type: "error", Error: ErrBusy.Error(), Busy: true})
		s.logf("%s: refused: busy", peer)
		return
	}
	// The slot is let go only once the answer is out, so that no more
	// tests' records and answers than slots are ever held at once.
	answering := false
	defer func() { s.slots.Release(answering) }()
	t := newTest(cfg, cookie, s.cells)
	t.procs = &s.procs
	if !s.register(t) {
		reply(message{Type: "error", Error: "bad request: another running test has this cookie's test id"})
		s.logf("%s: refused: test id %08x in use", peer, t.id)
		return
	}
	s.logf("%s: %s test, %d stream(s), %s + %s warm-up", peer, cfg.Protocol, cfg.Parallel, cfg.Duration, cfg.Omit)
	// The test ends with the server: closing the control connection
	// interrupts whatever the test waits for.
	stop := context.AfterFunc(ctx, func() { c.Close() })
	res, err := t.run(ctx, c, dec, reply)
	stop()
	t.closeConns()
	s.unregister(t)
	answering = true
	s.slots.Answering()
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
		return Config{}, [cookieLen]byte{}, fmt.Errorf("bad request: type %q, want test", serverkit.Clip(req.Type))
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

// test is the server's side of one test.
type test struct {
	cfg    Config
	cookie [cookieLen]byte
	id     uint32
	edges  []time.Duration

	mu      sync.Mutex
	conns   []net.Conn
	n       int
	closed  bool
	allConn chan struct{} // closed when all TCP data connections arrived

	recv     []*receiver
	deadline atomic.Int64 // unix ns: when the TCP read loop stops

	// UDP: the server's reader records datagrams into recv under rmu while
	// receiving; the test stops it (waitUDP) before reading recv.
	rmu       sync.Mutex
	receiving bool
	t0        time.Time
	kick      chan struct{} // the deadline moved

	procs *serverkit.Procs // the server's, lends readOne a P; nil in tests without one
}

// newTest makes the records of a test: at most cells bins over all its
// streams.
func newTest(cfg Config, cookie [cookieLen]byte, cells int64) *test {
	t := &test{
		cfg:     cfg,
		cookie:  cookie,
		id:      binary.BigEndian.Uint32(cookie[:4]),
		edges:   boundaries(cfg.Omit, cfg.Duration, serverInterval(cfg, cells)),
		conns:   make([]net.Conn, cfg.Parallel),
		allConn: make(chan struct{}),
		kick:    make(chan struct{}, 1),
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
		select {
		case t.kick <- struct{}{}:
		default:
		}
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

func (t *test) run(ctx context.Context, c net.Conn, dec *json.Decoder, reply func(message) bool) (message, error) {
	reply(message{Type: "accept"})
	_ = c.SetReadDeadline(time.Now().Add(serverkit.ControlTimeout))
	var m message
	if err := dec.Decode(&m); err != nil {
		return message{}, fmt.Errorf("waiting for start: %w", err)
	}
	if m.Type != "start" {
		return message{}, fmt.Errorf("got %q, want start", serverkit.Clip(m.Type))
	}
	if t.cfg.Protocol == "tcp" {
		timer := time.NewTimer(serverkit.ControlTimeout)
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
		t.rmu.Lock()
		t.t0, t.receiving = t0, true
		t.rmu.Unlock()
		wg.Go(t.waitUDP)
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
		return abort(fmt.Errorf("got %q, want done", serverkit.Clip(m.Type)))
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

// readUDP reads the server's UDP socket until it is closed and hands each
// datagram to its test by the test id in its header; others are dropped.
// One reader for all tests: the socket is one, and a datagram's test is
// known only once it is read.
func (s *Server) readUDP() {
	if s.readUDPBatches() {
		return
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := s.udp.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. an ICMP error queued on the socket
		}
		if n < descriptors.StreamUDPHeader {
			continue
		}
		if t := s.lookup(binary.BigEndian.Uint32(buf[16:20])); t != nil {
			t.observeUDPAt(buf[:n], time.Now())
		}
	}
}

// observeUDPAt records datagram b (of this test's id), read at now, if
// the test is receiving and its data deadline has not passed.
func (t *test) observeUDPAt(b []byte, now time.Time) {
	st := binary.BigEndian.Uint32(b[20:24])
	if st >= uint32(len(t.recv)) {
		return
	}
	t.rmu.Lock()
	defer t.rmu.Unlock()
	if !t.receiving || now.UnixNano() >= t.deadline.Load() {
		return
	}
	r := t.recv[st]
	el := now.Sub(t.t0)
	k := r.bin(el, t.edges)
	if r.seq.Observe(binary.BigEndian.Uint64(b[0:8])).Kind == udpseq.Rejected {
		return
	}
	r.bytes[k] += int64(len(b))
	r.packets[k]++
	r.last = el
}

// waitUDP returns once the data deadline has passed (it may move, see
// setDataDeadline), after which the reader no longer touches recv.
func (t *test) waitUDP() {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		left := time.Until(t.dataDeadline())
		if left <= 0 {
			break
		}
		timer.Reset(left)
		select {
		case <-timer.C:
		case <-t.kick:
		}
	}
	t.rmu.Lock()
	t.receiving = false
	t.rmu.Unlock()
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
