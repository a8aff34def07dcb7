package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// TestTCPInfoSides: after requests through ping to pong (on its event
// loops), ping's TCPInfoPath reports every side: ping's connections from
// the client, ping's to pong and pong's own from ping, their sums growing
// by what happened in between; a pong without ping answers its side alone.
func TestTCPInfoSides(t *testing.T) {
	pongURL := servePongOn(t, newPong(1<<20, chunkSize))
	var answers tcpinfo.Book
	ping, err := NewPingHandler(PingConfig{PongURL: pongURL, Answers: &answers})
	if err != nil {
		t.Fatal(err)
	}
	pingURL := serveWith(t, "Serve", func(ctx context.Context, ln net.Listener) error { return Serve(ctx, answers.Listener(ln), ping) })
	ask := func(base string) TCPInfo {
		t.Helper()
		resp, err := http.Get(base + TCPInfoPath)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET %s%s: %s %s", base, TCPInfoPath, resp.Status, resp.Header.Get("Content-Type"))
		}
		info, err := ReadTCPInfo(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	before := ask(pingURL)
	if before.Ping == nil || before.Relay == nil || before.Pong == nil {
		t.Fatalf("ping answered %+v, want every side", before)
	}
	for range 5 {
		resp, err := http.Get(pingURL + "/ping/100000")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != 100000 {
			t.Fatalf("relayed %d bytes, %v", n, err)
		}
		resp.Body.Close()
	}
	after := ask(pingURL)
	for _, s := range []struct {
		side     string
		was, now *tcpinfo.Snapshot
	}{{"ping", before.Ping, after.Ping}, {"relay", before.Relay, after.Relay}, {"pong", before.Pong, after.Pong}} {
		w := tcpinfo.Window(*s.was, *s.now)
		if w == nil || w.Connections < 1 || w.RTTUS <= 0 || w.Cwnd <= 0 {
			t.Errorf("side %s: window %+v, want at least one connection with an RTT and a window", s.side, w)
		}
	}
	alone := ask(pongURL)
	if alone.Pong == nil || alone.Ping != nil || alone.Relay != nil {
		t.Errorf("pong answered %+v, want its side alone", alone)
	}
	// Only GET: a POST to the path is ping's 404, as for any other path.
	resp, err := http.Post(pingURL+TCPInfoPath, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST %s: %s, want 404", TCPInfoPath, resp.Status)
	}
}

// TestReadTCPInfoBounded: an answer is read up to MaxTCPInfoBytes, so a
// server that is not cnperf's cannot make siege read without end.
func TestReadTCPInfoBounded(t *testing.T) {
	long := `{"ping":{"closed":{"n":1}},"x":"` + strings.Repeat("a", 2*MaxTCPInfoBytes) + `"}`
	if _, err := ReadTCPInfo(strings.NewReader(long)); err == nil {
		t.Fatal("an answer over the bound was read whole")
	}
	info, err := ReadTCPInfo(strings.NewReader(`{"pong":{"closed":{"n":3,"retrans":2},"live":{"n":1}}}`))
	if err != nil || info.Pong == nil || info.Pong.Closed.N != 3 || info.Pong.Live.N != 1 {
		t.Fatalf("ReadTCPInfo = %+v, %v", info, err)
	}
}

// slowConn is a booked connection whose TCP_INFO reading waits for
// release: a book of thousands of connections, as pong reads it.
type slowConn struct {
	net.Conn
	reading, release chan struct{}
	once             sync.Once
}

func (c *slowConn) SyscallConn() (syscall.RawConn, error) { return slowRaw{c}, nil }
func (c *slowConn) Close() error                          { return nil }

type slowRaw struct{ c *slowConn }

func (r slowRaw) Control(func(uintptr)) error {
	r.c.once.Do(func() { close(r.c.reading) })
	<-r.c.release
	return errors.New("not a socket")
}
func (slowRaw) Read(func(uintptr) bool) error  { return errors.New("not a socket") }
func (slowRaw) Write(func(uintptr) bool) error { return errors.New("not a socket") }

// TestPongTCPInfoOffLoop: while pong reads its book for a TCPInfoPath
// request, the loop that took the request serves its other connections;
// the request, and one pipelined behind it, are answered in order once
// the reading ends. On one loop that read the book itself, every
// connection of the loop waited for the reading.
func TestPongTCPInfoOffLoop(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one loop
	h := newPong(1<<20, chunkSize)
	slow := &slowConn{reading: make(chan struct{}), release: make(chan struct{})}
	h.book.Wrap(slow)
	released := false
	release := func() {
		if !released {
			released = true
			close(slow.release)
		}
	}
	defer release()
	addr := strings.TrimPrefix(servePongOn(t, h), "http://")
	asker, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer asker.Close()
	if _, err := io.WriteString(asker, "GET /tcpinfo HTTP/1.1\r\nHost: x\r\n\r\nGET /pong/5 HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-slow.reading
	other, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(other, "GET /pong/5 HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(other), nil)
	if err != nil {
		t.Fatalf("another connection, while pong read its book: %v", err)
	}
	resp.Body.Close()
	release()
	asker.SetDeadline(time.Now().Add(10 * time.Second))
	got := readAnswers(t, bufio.NewReader(asker), "GET", 2)
	var info TCPInfo
	if err := json.Unmarshal([]byte(got[0].body), &info); err != nil || got[0].code != 200 || info.Pong == nil {
		t.Errorf("TCPInfoPath answered %+v (%v)", got[0], err)
	}
	if got[1].code != 200 || got[1].body != string(Body(5)) {
		t.Errorf("the request behind it: %+v", got[1])
	}
}
