package tcpinfo

import (
	"context"
	"net"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// Sums are an Acc's raw sums: what a long-lived server hands a client,
// which subtracts two of them for what happened between (Window). Means
// cannot be subtracted; sums can.
type Sums struct {
	N       uint64 `json:"n"`
	Retrans uint64 `json:"retrans"`
	RTT     uint64 `json:"rtt_us_sum"`
	RTTVar  uint64 `json:"rttvar_us_sum"`
	Cwnd    uint64 `json:"cwnd_sum"`
	RTTMax  uint32 `json:"rtt_max_us"`
	CwndMin uint32 `json:"cwnd_min"`
}

// Sums returns a's sums.
func (a *Acc) Sums() Sums {
	return Sums{N: a.n, Retrans: a.retrans, RTT: a.rtt, RTTVar: a.rttvar, Cwnd: a.cwnd, RTTMax: a.rttMax, CwndMin: a.cwndMin}
}

// Snapshot is a Book at one moment: its closed connections' last readings
// summed since it began, and its live connections' readings now.
type Snapshot struct {
	Closed Sums `json:"closed"`
	Live   Sums `json:"live"`
}

// Window is what a book's connections did between two snapshots of it:
// the retransmits sent in between (those of connections that closed, and
// of those still open, whose counters run on), over the connections that
// closed in between and those open at cur; RTT and window are means over
// those, the largest RTT and smallest window are the live ones' at cur
// (a closed connection's extremes are summed away). nil when no
// connection was read, or when cur does not follow prev (a restarted
// server, or snapshots of two servers).
func Window(prev, cur Snapshot) *Stats {
	c, p := cur.Closed, prev.Closed
	if c.N < p.N || c.Retrans < p.Retrans || c.RTT < p.RTT || c.RTTVar < p.RTTVar || c.Cwnd < p.Cwnd {
		return nil
	}
	n := c.N - p.N + cur.Live.N
	was, is := p.Retrans+prev.Live.Retrans, c.Retrans+cur.Live.Retrans
	if n == 0 || is < was {
		return nil
	}
	f := float64(n)
	s := &Stats{Connections: int64(n), Retransmits: int64(is - was),
		RTTUS:    float64(c.RTT-p.RTT+cur.Live.RTT) / f,
		RTTVarUS: float64(c.RTTVar-p.RTTVar+cur.Live.RTTVar) / f,
		Cwnd:     float64(c.Cwnd-p.Cwnd+cur.Live.Cwnd) / f}
	if cur.Live.N > 0 {
		s.RTTMaxUS, s.CwndMin = float64(cur.Live.RTTMax), int64(cur.Live.CwndMin)
	}
	return s
}

// Book keeps TCP_INFO of a long-lived server's connections, or a pool's:
// each one's last reading as it closes, summed, and the live ones, read
// when a snapshot is asked for. Connections are net.Conns it wraps (Wrap,
// Listener, Dial) or sockets by descriptor (Open, Close) for a server that
// owns its descriptors. Adding and closing take the book's lock for a
// moment, reading a connection's bytes does not take it at all.
//
// A snapshot takes the lock only to list the live connections and to sum
// them with the closed ones; it reads each connection outside it, so that
// accepting a connection never waits for thousands of readings (with the
// lock held throughout, 200 clients asking a server of 3,000 connections
// for snapshots held a new connection's accept for seconds). Snapshots
// asked for at once share their reads (see flight). The zero Book is
// ready.
type Book struct {
	mu     sync.Mutex
	closed Acc
	live   map[*entry]struct{}
	fds    map[int]*entry // the live descriptors (Open) among live

	flight flight
	// The one read in flight's lists (flight runs one at a time): the
	// live connections it reads, and their readings.
	entries  []*entry
	readings []reading
}

// entry is one live connection, a net.Conn or a descriptor. A snapshot
// holds its lock while it reads it, and closing it holds the lock while
// it takes its last reading: a connection is never read once closed (a
// closed descriptor's number may be another socket's by then).
type entry struct {
	mu   sync.Mutex
	conn net.Conn // nil for a descriptor
	fd   int
	gone bool // under mu: closed, its last reading taken
	// counted is under Book.mu: its last reading is in Book.closed and it
	// is off the live list.
	counted bool
}

// read fills info with the connection's TCP_INFO; the caller holds e.mu.
func (e *entry) read(info *unix.TCPInfo) bool {
	if e.conn != nil {
		return readConn(e.conn, info)
	}
	return readFd(e.fd, info)
}

// MaxLive bounds the live connections a snapshot reads; more are not
// booked (their bytes still flow): a server's memory and a snapshot's
// time stay bounded whatever a client opens.
const MaxLive = 1 << 16

// Snapshot reads the live connections and returns them with the closed
// ones' sums. Every connection booked when the snapshot began is in it
// once: among the live ones if it was still open when the readings were
// summed, else among the closed ones with its last reading; so a
// connection's counters never go back from one snapshot to the next.
func (b *Book) Snapshot() Snapshot {
	return b.flight.do(b.read)
}

// read is one snapshot's readings.
func (b *Book) read() Snapshot {
	b.mu.Lock()
	es := b.entries[:0]
	for e := range b.live {
		es = append(es, e)
	}
	b.mu.Unlock()
	rs := slices.Grow(b.readings[:0], len(es))[:len(es)]
	var info unix.TCPInfo
	for i, e := range es {
		e.mu.Lock()
		if e.gone || !e.read(&info) {
			es[i] = nil // closed (and counted): among the closed ones
		} else {
			rs[i] = reading{retrans: info.Total_retrans, rtt: info.Rtt, rttvar: info.Rttvar, cwnd: info.Snd_cwnd}
		}
		e.mu.Unlock()
	}
	b.mu.Lock()
	var live Acc
	for i, e := range es {
		// One closed since its reading has its last one among the
		// closed sums taken now.
		if e != nil && !e.counted {
			live.add(rs[i])
		}
	}
	s := Snapshot{Closed: b.closed.Sums(), Live: live.Sums()}
	b.mu.Unlock()
	clear(es) // keep no closed connection alive
	b.entries, b.readings = es, rs
	return s
}

// Closed is the closed connections' summary (their last readings, with
// the largest RTT and the smallest window among them); nil if none closed.
// A client that closes its pool first reads every connection so.
func (b *Book) Closed() *Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed.Stats()
}

// add books e (and a descriptor's number) unless the book is full.
func (b *Book) add(e *entry) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.live) >= MaxLive {
		return false
	}
	if b.live == nil {
		b.live, b.fds = map[*entry]struct{}{}, map[int]*entry{}
	}
	b.live[e] = struct{}{}
	if e.conn == nil {
		b.fds[e.fd] = e
	}
	return true
}

// retire takes e's last reading into the closed sums and forgets it.
func (b *Book) retire(e *entry) {
	e.mu.Lock() // waits for a snapshot reading e
	defer e.mu.Unlock()
	if e.gone {
		return
	}
	e.gone = true
	var info unix.TCPInfo
	read := e.read(&info)
	b.mu.Lock()
	defer b.mu.Unlock()
	if read {
		b.closed.Add(&info)
	}
	e.counted = true
	delete(b.live, e)
	if e.conn == nil {
		delete(b.fds, e.fd)
	}
}

// Wrap books c until it closes; c is returned as it is if the book is
// full.
func (b *Book) Wrap(c net.Conn) net.Conn {
	e := &entry{conn: c}
	if !b.add(e) {
		return c
	}
	return &bookConn{Conn: c, b: b, e: e}
}

// Open books the socket fd; the caller calls Close before it closes fd.
func (b *Book) Open(fd int) { b.add(&entry{fd: fd}) }

// Close reads fd's last TCP_INFO and forgets it: after it returns, no
// snapshot touches fd, which the caller may close (and the kernel reuse).
func (b *Book) Close(fd int) {
	b.mu.Lock()
	e := b.fds[fd]
	b.mu.Unlock()
	if e != nil {
		b.retire(e)
	}
}

// bookConn is a booked net.Conn: its first Close reads its last TCP_INFO.
type bookConn struct {
	net.Conn
	b    *Book
	e    *entry
	once sync.Once
}

func (c *bookConn) Close() error {
	c.once.Do(func() { c.b.retire(c.e) })
	return c.Conn.Close()
}

// Dial wraps a dialler (an http.Transport's DialContext) so that every
// connection it makes is booked.
func (b *Book) Dial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return b.Wrap(c), nil
	}
}

// Listener books every connection ln accepts.
func (b *Book) Listener(ln net.Listener) net.Listener { return &bookListener{Listener: ln, b: b} }

type bookListener struct {
	net.Listener
	b *Book
}

func (l *bookListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.b.Wrap(c), nil
}
