package tcpinfo

import (
	"context"
	"net"
	"testing"
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
