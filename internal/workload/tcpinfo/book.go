package tcpinfo

import (
	"context"
	"net"
	"sync"
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
// owns its descriptors. Adding and closing take a lock, reading a
// connection's bytes does not. The zero Book is ready.
type Book struct {
	mu     sync.Mutex
	closed Acc
	conns  map[*bookConn]struct{}
	fds    map[int]struct{}
}

// MaxLive bounds the live connections a snapshot reads; more are not
// booked (their bytes still flow): a server's memory and a snapshot's
// time stay bounded whatever a client opens.
const MaxLive = 1 << 16

// Snapshot reads the live connections and returns them with the closed
// ones' sums.
func (b *Book) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	var live Acc
	for c := range b.conns {
		live.ReadConn(c.Conn)
	}
	for fd := range b.fds {
		live.ReadFd(fd)
	}
	return Snapshot{Closed: b.closed.Sums(), Live: live.Sums()}
}

// Closed is the closed connections' summary (their last readings, with
// the largest RTT and the smallest window among them); nil if none closed.
// A client that closes its pool first reads every connection so.
func (b *Book) Closed() *Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed.Stats()
}

// Wrap books c until it closes; c is returned as it is if the book is
// full.
func (b *Book) Wrap(c net.Conn) net.Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.conns)+len(b.fds) >= MaxLive {
		return c
	}
	bc := &bookConn{Conn: c, b: b}
	if b.conns == nil {
		b.conns = map[*bookConn]struct{}{}
	}
	b.conns[bc] = struct{}{}
	return bc
}

// Open books the socket fd; the caller calls Close before it closes fd.
func (b *Book) Open(fd int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.conns)+len(b.fds) >= MaxLive {
		return
	}
	if b.fds == nil {
		b.fds = map[int]struct{}{}
	}
	b.fds[fd] = struct{}{}
}

// Close reads fd's last TCP_INFO and forgets it: after it returns, no
// snapshot touches fd, which the caller may close (and the kernel reuse).
func (b *Book) Close(fd int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.fds[fd]; ok {
		delete(b.fds, fd)
		b.closed.ReadFd(fd)
	}
}

// bookConn is a booked net.Conn: its first Close reads its last TCP_INFO.
type bookConn struct {
	net.Conn
	b    *Book
	once sync.Once
}

func (c *bookConn) Close() error {
	c.once.Do(func() {
		c.b.mu.Lock()
		delete(c.b.conns, c)
		c.b.closed.ReadConn(c.Conn)
		c.b.mu.Unlock()
	})
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
