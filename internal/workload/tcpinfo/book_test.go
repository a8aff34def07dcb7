package tcpinfo

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestWindow: what happened between two snapshots is the difference of
// the closed sums plus the live readings at the end, retransmits of live
// connections counted from where they stood; snapshots that do not
// follow each other give nothing.
func TestWindow(t *testing.T) {
	live := func(n, retrans, rtt, cwnd uint64) Sums {
		return Sums{N: n, Retrans: retrans, RTT: rtt, Cwnd: cwnd, RTTMax: uint32(rtt / max(n, 1)), CwndMin: uint32(cwnd / max(n, 1))}
	}
	tests := []struct {
		name      string
		prev, cur Snapshot
		want      *Stats
	}{
		{"nothing", Snapshot{}, Snapshot{}, nil},
		{"one pooled connection that retransmitted twice in between",
			Snapshot{Live: live(1, 5, 100, 10)}, Snapshot{Live: live(1, 7, 120, 12)},
			&Stats{Connections: 1, Retransmits: 2, RTTUS: 120, RTTMaxUS: 120, Cwnd: 12, CwndMin: 12}},
		{"connections that closed in between and none live",
			Snapshot{Closed: Sums{N: 10, Retrans: 3, RTT: 1000, Cwnd: 100}},
			Snapshot{Closed: Sums{N: 14, Retrans: 4, RTT: 1800, Cwnd: 140}},
			&Stats{Connections: 4, Retransmits: 1, RTTUS: 200, Cwnd: 10}},
		{"a live connection that closed in between",
			Snapshot{Live: live(1, 2, 100, 10)},
			Snapshot{Closed: Sums{N: 1, Retrans: 3, RTT: 100, Cwnd: 10}},
			&Stats{Connections: 1, Retransmits: 1, RTTUS: 100, Cwnd: 10}},
		{"a restarted server", Snapshot{Closed: Sums{N: 10}}, Snapshot{Closed: Sums{N: 2}, Live: live(1, 0, 50, 10)}, nil},
		{"retransmits that went backwards", Snapshot{Live: live(1, 9, 100, 10)}, Snapshot{Live: live(1, 2, 100, 10)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Window(tt.prev, tt.cur)
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Fatalf("Window = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestBookReadsLiveAndClosedConnections: a book sees the connections it
// wraps while they are open and keeps their last reading when they
// close, through a listener and a dialler alike.
func TestBookReadsLiveAndClosedConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var served, dialled Book
	bl := served.Listener(ln)
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := bl.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := dialled.Dial((&net.Dialer{}).DialContext)
	var clients, servers []net.Conn
	for range 3 {
		c, err := dial(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		servers = append(servers, <-accepted)
	}
	before := served.Snapshot()
	if before.Live.N != 3 || before.Closed.N != 0 {
		t.Fatalf("served book with 3 open connections: %+v", before)
	}
	if s := dialled.Snapshot(); s.Live.N != 3 {
		t.Fatalf("dialled book with 3 open connections: %+v", s)
	}
	if _, err := clients[0].Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	servers[0].Close()
	servers[0].Close() // a second close reads nothing more
	after := served.Snapshot()
	if after.Live.N != 2 || after.Closed.N != 1 {
		t.Fatalf("after one close: %+v", after)
	}
	w := Window(before, after)
	if w == nil || w.Connections != 3 || w.RTTUS <= 0 {
		t.Fatalf("Window = %+v, want 3 connections read with an RTT", w)
	}
	for i := range clients {
		clients[i].Close()
		servers[i].Close()
	}
	if s := dialled.Snapshot(); s.Live.N != 0 || s.Closed.N != 3 {
		t.Fatalf("dialled book after every close: %+v", s)
	}
}

// TestBookByDescriptor: a server that owns its sockets books them by
// descriptor; a descriptor closed through the book is never read again.
func TestBookByDescriptor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	raw.Control(func(f uintptr) { fd = int(f) })
	var b Book
	b.Open(fd)
	if s := b.Snapshot(); s.Live.N != 1 {
		t.Fatalf("one booked descriptor: %+v", s)
	}
	b.Close(fd)
	b.Close(fd) // unknown now: nothing read
	if s := b.Snapshot(); s.Live.N != 0 || s.Closed.N != 1 {
		t.Fatalf("after Close: %+v", s)
	}
}

// TestBookClosed: the closed connections' summary keeps their extremes,
// which Window sums away; nil before any closed.
func TestBookClosed(t *testing.T) {
	var b Book
	if b.Closed() != nil {
		t.Fatal("a summary before any connection closed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := b.Dial((&net.Dialer{}).DialContext)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	s := b.Closed()
	if s == nil || s.Connections != 1 || s.CwndMin < 1 || s.RTTMaxUS < s.RTTUS {
		t.Fatalf("Closed = %+v, want one connection with its extremes", s)
	}
}

// stuckConn is a connection whose TCP_INFO reading waits until release
// is closed; entered is closed when a reading begins.
type stuckConn struct {
	net.Conn
	entered, release chan struct{}
	once             sync.Once
}

func (c *stuckConn) SyscallConn() (syscall.RawConn, error) { return stuckRaw{c}, nil }
func (c *stuckConn) Close() error                          { return nil }

type stuckRaw struct{ c *stuckConn }

func (r stuckRaw) Control(func(uintptr)) error {
	r.c.once.Do(func() { close(r.c.entered) })
	<-r.c.release
	return errors.New("not a socket")
}
func (stuckRaw) Read(func(uintptr) bool) error  { return errors.New("not a socket") }
func (stuckRaw) Write(func(uintptr) bool) error { return errors.New("not a socket") }

// TestBookSnapshotLeavesAcceptsFree: while a snapshot reads a connection
// (thousands of them, on a busy server), the book still books and
// forgets the others: accepting waits for no reading. With the reading
// under the book's lock, 200 clients asking for snapshots held a new
// connection's accept for seconds.
func TestBookSnapshotLeavesAcceptsFree(t *testing.T) {
	var b Book
	stuck := &stuckConn{entered: make(chan struct{}), release: make(chan struct{})}
	b.Wrap(stuck)
	free := make(chan struct{})
	close(free) // read at once
	other := b.Wrap(&stuckConn{entered: make(chan struct{}), release: free})
	snapped := make(chan Snapshot, 1)
	go func() { snapped <- b.Snapshot() }()
	<-stuck.entered
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Wrap(&stuckConn{entered: make(chan struct{}), release: free})
		b.Open(1 << 20) // no such descriptor: booked, never read
		b.Close(1 << 20)
		other.Close() // not the one being read
		b.Closed()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("booking and closing connections waited for a snapshot's reading")
	}
	close(stuck.release)
	<-done
	if s := <-snapped; s.Live.N != 0 {
		t.Errorf("snapshot of connections that are no sockets: %+v", s)
	}
}

// TestFlightShares: snapshots asked for at once share their reads, one
// read at a time, and every caller gets a read that began after it
// asked.
func TestFlightShares(t *testing.T) {
	var f flight
	var began, running, most atomic.Int64
	read := func() Snapshot {
		n := began.Add(1)
		r := running.Add(1)
		for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
		}
		for range 100 {
			runtime.Gosched()
		}
		running.Add(-1)
		return Snapshot{Closed: Sums{N: uint64(n)}}
	}
	const callers, calls = 100, 5
	var wg sync.WaitGroup
	var stale atomic.Int64
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				asked := began.Load()
				if s := f.do(read); int64(s.Closed.N) <= asked {
					stale.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := stale.Load(); n > 0 {
		t.Errorf("%d callers got a read that began before they asked", n)
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d reads ran at once, want one at a time", m)
	}
	if n := began.Load(); n >= callers*calls/2 {
		t.Errorf("%d reads for %d calls: callers asking at once did not share them", n, callers*calls)
	}
}

// TestBookCountsEachOnce: connections closing while snapshots are taken
// are each in every snapshot once, live or closed, and the closed sums
// never go back.
func TestBookCountsEachOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var b Book
	const n = 50
	var clients, served []net.Conn
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		served = append(served, b.Wrap(s))
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for _, s := range served {
			s.Close()
		}
	}()
	var last uint64
	for done := false; !done; {
		select {
		case <-closed:
			done = true
		default:
		}
		s := b.Snapshot()
		if s.Live.N+s.Closed.N != n || s.Closed.N < last {
			t.Fatalf("snapshot %+v after %d closed, want %d connections in all", s, last, n)
		}
		last = s.Closed.N
	}
	if s := b.Snapshot(); s.Closed.N != n || s.Live.N != 0 {
		t.Fatalf("after every close: %+v", s)
	}
}
