package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/pingpong"

	"github.com/valyala/fasthttp"

	"github.com/cnperf/cnperf/internal/testutil"
)

// answer is one response as it came off the wire.
type answer struct {
	code  int
	close bool // "Connection: close"
	keep  bool // "Connection: keep-alive"
	body  string
}

// readAnswers reads n responses to requests of method from br.
func readAnswers(t *testing.T, br *bufio.Reader, method string, n int) []answer {
	t.Helper()
	var out []answer
	for range n {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("response %d: %v", len(out)+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("response %d body: %v", len(out)+1, err)
		}
		c := resp.Header.Get("Connection")
		out = append(out, answer{resp.StatusCode, resp.Close || c == "close", c == "keep-alive", string(body)})
	}
	return out
}

// closed reports whether the server closed c within half a second: EOF,
// or a reset when it closed with a request's bytes unread.
func closed(c net.Conn, br *bufio.Reader) bool {
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, err := br.ReadByte()
	return err == io.EOF || errors.Is(err, syscall.ECONNRESET)
}

// TestPongLoopWire speaks HTTP/1.x to pong's event loops byte for byte:
// keep-alive rules, pipelining, bodies, split and bad requests.
func TestPongLoopWire(t *testing.T) {
	addr := strings.TrimPrefix(servePongOn(t, newPong(1<<20, chunkSize)), "http://")
	long := "GET /pong/5 HTTP/1.1\r\nHost: x\r\nX-Long: " + strings.Repeat("a", headMax) + "\r\n\r\n"
	tests := []struct {
		name   string
		send   []string // written one after another
		method string
		want   []answer
		closes bool // the server closes the connection after the answers
	}{
		{"http/1.1 keeps", []string{"GET /pong/5 HTTP/1.1\r\nHost: x\r\n\r\n"}, "GET", []answer{{200, false, false, "poong"}}, false},
		{"http/1.0 closes", []string{"GET /pong/5 HTTP/1.0\r\n\r\n"}, "GET", []answer{{200, true, false, "poong"}}, true},
		{"http/1.0 keep-alive", []string{"GET /pong/6 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"}, "GET", []answer{{200, false, true, "pooong"}}, false},
		{"connection close", []string{"GET /pong/4 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"}, "GET", []answer{{200, true, false, "pong"}}, true},
		{"pipelined", []string{"GET /pong/5 HTTP/1.1\r\nHost: x\r\n\r\nGET /pong/x HTTP/1.1\r\nHost: x\r\n\r\nGET /pong/40000 HTTP/1.1\r\nHost: x\r\n\r\n"},
			"GET", []answer{{200, false, false, "poong"}, {404, false, false, "404 page not found\n"}, {200, false, false, string(Body(40000))}}, false},
		{"split byte by byte", strings.Split("GET /pong/7 HTTP/1.1\r\nHost: x\r\n\r\n", ""), "GET", []answer{{200, false, false, "poooong"}}, false},
		{"bare LF and leading CRLF", []string{"\r\nGET /pong/5 HTTP/1.1\nHost: x\n\n"}, "GET", []answer{{200, false, false, "poong"}}, false},
		{"body skipped", []string{"POST /pong/5 HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123", "456789GET /pong/4 HTTP/1.1\r\nHost: x\r\n\r\n"},
			"POST", []answer{{200, false, false, "poong"}, {200, false, false, "pong"}}, false},
		{"head", []string{"HEAD /pong/70000 HTTP/1.1\r\nHost: x\r\n\r\n"}, "HEAD", []answer{{200, false, false, ""}}, false},
		{"garbage", []string{"BLAH\r\n\r\n"}, "GET", []answer{{400, true, false, "Bad Request"}}, true},
		{"head too long", []string{long}, "GET", []answer{{431, true, false, "Request Header Fields Too Large"}}, true},
		{"body too large", []string{"POST /pong/5 HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n"}, "POST", []answer{{413, true, false, "Request Entity Too Large"}}, true},
		{"chunked body", []string{"POST /pong/5 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"}, "POST", []answer{{501, true, false, "Not Implemented"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, s := range tt.send {
				if _, err := io.WriteString(c, s); err != nil {
					t.Fatal(err)
				}
			}
			br := bufio.NewReader(c)
			got := readAnswers(t, br, tt.method, len(tt.want))
			for i, w := range tt.want {
				if g := got[i]; g.code != w.code || g.close != w.close || g.keep != w.keep || g.body != w.body {
					t.Errorf("answer %d: %d close %v keep-alive %v, %d bytes %.20q; want %d %v %v, %d bytes %.20q",
						i+1, g.code, g.close, g.keep, len(g.body), g.body, w.code, w.close, w.keep, len(w.body), w.body)
				}
			}
			if got := closed(c, br); got != tt.closes {
				t.Errorf("connection closed %v, want %v", got, tt.closes)
			}
		})
	}
}

// TestPongLoopHalfClose: a client that sends its request and shuts its
// side down gets the whole answer, then the server's close.
func TestPongLoopHalfClose(t *testing.T) {
	addr := strings.TrimPrefix(servePongOn(t, newPong(1<<20, chunkSize)), "http://")
	for _, n := range []int{5, 100000} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET /pong/"+strconv.Itoa(n)+" HTTP/1.1\r\nHost: x\r\n\r\n")
		c.(*net.TCPConn).CloseWrite()
		br := bufio.NewReader(c)
		if a := readAnswers(t, br, "GET", 1)[0]; a.code != 200 || a.body != string(Body(n)) {
			t.Errorf("n=%d: %d, %d bytes", n, a.code, len(a.body))
		}
		if !closed(c, br) {
			t.Errorf("n=%d: the connection stays open after the answer", n)
		}
		c.Close()
	}
}

// TestPongLoopIdleSleeps: pong's loops, after answering, wait in calls
// that enter the scheduler and sleep: an idle pong does not tick every
// loopYield on the CPUs the tests run on.
func TestPongLoopIdleSleeps(t *testing.T) {
	url := servePongOn(t, newPong(1<<20, chunkSize))
	for range 20 {
		get(t, "GET", url+"/pong/100")
	}
	http.DefaultClient.CloseIdleConnections()
	// 300 ms: each loop's first wait that finds nothing, then sleep.
	testutil.CheckIdle(t, 300*time.Millisecond, 50)
}

// TestPongLoopShutdown: a cancelled pong closes its idle connections at
// once, lets an answer being read finish, and returns.
func TestPongLoopShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServePong(ctx, ln, pingpong.DefaultMaxSize) }()

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	// A 64 MiB answer the client has only begun to read.
	const n = 64 << 20
	io.WriteString(busy, "GET /pong/"+strconv.Itoa(n)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	bb := bufio.NewReader(busy)
	resp, err := http.ReadResponse(bb, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(idle, "GET /pong/4 HTTP/1.1\r\nHost: x\r\n\r\n")
	bi := bufio.NewReader(idle)
	readAnswers(t, bi, "GET", 1)

	cancel()
	if !closed(idle, bi) {
		t.Error("the idle connection is still open after the stop")
	}
	busy.SetReadDeadline(time.Now().Add(ShutdownGrace))
	got, err := io.Copy(io.Discard, resp.Body)
	if err != nil || got != n {
		t.Errorf("the answer in flight: %d of %d bytes, %v", got, n, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServePong: %v", err)
		}
	case <-time.After(ShutdownGrace + 2*time.Second):
		t.Fatal("ServePong did not return after the stop")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("still accepting after the stop")
	}
}

// TestPongLoopNotTCP: a listener without a socket is refused, not served.
func TestPongLoopNotTCP(t *testing.T) {
	if err := ServePong(context.Background(), fakeListener{}, 10); err != errNoSocket {
		t.Errorf("ServePong on a listener without a socket: %v, want %v", err, errNoSocket)
	}
}

type fakeListener struct{}

func (fakeListener) Accept() (net.Conn, error) { return nil, io.EOF }
func (fakeListener) Close() error              { return nil }
func (fakeListener) Addr() net.Addr            { return &net.TCPAddr{} }

// testLoop is a loop without descriptors, for request's parsing alone.
func testLoop(h *pongHandler) *loop {
	return &loop{h: h, sh: &shared{}, ctx: new(fasthttp.RequestCtx), br: bufio.NewReaderSize(nil, headMax)}
}

// TestPongLoopNoAllocs: parsing a request and queuing its answer
// allocates nothing once the connection's buffers are grown.
func TestPongLoopNoAllocs(t *testing.T) {
	l := testLoop(newPong(pingpong.DefaultMaxSize, chunkSize))
	c := &pconn{body: pongBody{h: l.h}}
	for _, n := range []int{2, 1024, 102400} {
		req := "GET /pong/" + strconv.Itoa(n) + " HTTP/1.1\r\nHost: x\r\nUser-Agent: wrk\r\n\r\n"
		run := func() {
			c.n = copy(c.in[:], req)
			if answered, ok := l.request(c); !answered || !ok {
				t.Fatalf("n=%d: answered %v, ok %v", n, answered, ok)
			}
			c.body.off = c.body.n // as if sent
		}
		run()
		if allocs := testing.AllocsPerRun(100, run); allocs != 0 {
			t.Errorf("n=%d: %.1f allocations per request, want 0", n, allocs)
		}
		if !bytes.HasPrefix(c.out, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.Contains(c.out, []byte("Content-Length: "+strconv.Itoa(BodyLen(n))+"\r\n")) {
			t.Errorf("n=%d: answer %q", n, c.out)
		}
	}
}

// FuzzPongLoop: whatever a client sends, the loop answers with whole
// HTTP/1.1 status lines or drops the connection, consumes what it parsed,
// and never panics or loops.
func FuzzPongLoop(f *testing.F) {
	for _, s := range []string{
		"GET /pong/5 HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /pong/5 HTTP/1.0\r\n\r\nGET /pong/70000 HTTP/1.1\r\n\r\n",
		"POST /pong/3 HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcdGET /pong/9 HTTP/1.1\r\n\r\n",
		"HEAD /pong/1 HTTP/1.1\r\nConnection: close\r\n\r\n",
		"\r\n\nGET / HTTP/1.1\n\n", "BLAH\r\n\r\n", "GET /pong/99999999999 HTTP/1.1\r\n\r\n",
		"GET /pong/5 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "GET /pong/5 HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"GET /pong/%35 HTTP/1.1\r\n\r\n", "GET http://h/pong/5 HTTP/1.1\r\n\r\n", "\n\n\n", "",
		"GET /tcpinfo HTTP/1.0\r\n\r\nGET /tcpinfo HTTP/1.1\r\nConnection: close\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	h := newPong(fuzzMax, 7)
	f.Fuzz(func(t *testing.T, in []byte) {
		l := testLoop(h)
		c := &pconn{body: pongBody{h: h}}
		c.n = copy(c.in[:], in)
		for range len(in) + 1 {
			if c.skip > 0 {
				k := min(c.skip, c.n)
				c.consume(k)
				c.skip -= k
			}
			before := c.n
			answered, ok := l.request(c)
			if !ok || !answered {
				return // dropped, or waiting for more
			}
			if c.pending { // the snapshot a goroutine reads (readBook)
				l.answerSnapshot(c, h.book.Snapshot())
			}
			if !bytes.HasPrefix(c.out, []byte("HTTP/1.1 ")) || !bytes.Contains(c.out, []byte("\r\n\r\n")) {
				t.Fatalf("answer %q", c.out)
			}
			if c.n >= before && before > 0 {
				t.Fatalf("an answer consumed nothing (%d bytes left)", c.n)
			}
			if c.closing {
				return
			}
			c.body.off = c.body.n
		}
		t.Fatalf("more answers than bytes for %q", in)
	})
}

// TestBadRequestsAlike: ping (on fasthttp) and pong (on its event loops)
// answer the same bad request alike: the same status and text, and the
// connection closed after it.
func TestBadRequestsAlike(t *testing.T) {
	pongAddr := strings.TrimPrefix(servePongOn(t, newPong(1<<20, chunkSize)), "http://")
	ping, err := NewPingHandler(PingConfig{PongURL: "http://" + pongAddr})
	if err != nil {
		t.Fatal(err)
	}
	pingAddr := strings.TrimPrefix(serveOn(t, ping), "http://")
	long := "X-Long: " + strings.Repeat("a", headMax) + "\r\n"
	tests := []struct {
		name, request string // %s: the server's path
		want          answer
	}{
		{"body over 4 KiB", "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + strings.Repeat("b", 5000), answer{413, true, false, "Request Entity Too Large"}},
		{"head over 4 KiB", "GET %s HTTP/1.1\r\nHost: x\r\n" + long + "\r\n", answer{431, true, false, "Request Header Fields Too Large"}},
		{"garbage", "BLAH%s\r\n\r\n", answer{400, true, false, "Bad Request"}},
		{"chunked body", "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", answer{501, true, false, "Not Implemented"}},
	}
	for _, tt := range tests {
		for _, srv := range []struct{ name, addr, path string }{{"pong", pongAddr, "/pong/5"}, {"ping", pingAddr, "/ping/5"}} {
			t.Run(tt.name+"/"+srv.name, func(t *testing.T) {
				c, err := net.Dial("tcp", srv.addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := fmt.Fprintf(c, tt.request, srv.path); err != nil {
					t.Fatal(err)
				}
				br := bufio.NewReader(c)
				resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got := answer{resp.StatusCode, resp.Close || resp.Header.Get("Connection") == "close", false, string(body)}
				if got != tt.want {
					t.Errorf("%+v, want %+v", got, tt.want)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
					t.Errorf("Content-Type %q", ct)
				}
				if !closed(c, br) {
					t.Error("the connection stays open")
				}
			})
		}
	}
}

// TestBadRequestTimeout: a request whose head does not come in time gets
// no answer from ping, as from pong's loops (which drop it in sweep): the
// connection is closed, whether nothing came or half a head.
func TestBadRequestTimeout(t *testing.T) {
	ping, err := NewPingHandler(PingConfig{PongURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(serveWith(t, "serve", func(ctx context.Context, ln net.Listener) error {
		return serve(ctx, ln, ping, 200*time.Millisecond)
	}), "http://")
	for _, sent := range []string{"", "GET /ping/5 HTTP/1.1\r\nHost: x\r\n"} {
		t.Run(fmt.Sprintf("%q", sent), func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, sent); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second)) // the server's close ends the read well before
			got, err := io.ReadAll(c)
			if err != nil || len(got) > 0 {
				t.Fatalf("read %q, %v; want the connection closed without an answer", got, err)
			}
		})
	}
}
