package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/pingpong"

	"github.com/valyala/fasthttp"
)

func TestBody(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{-1, "pong"},
		{0, "pong"},
		{1, "pong"},
		{2, "pong"},
		{3, "pong"},
		{4, "pong"},
		{5, "poong"},
		{6, "pooong"},
	}
	for _, tt := range tests {
		if got := string(Body(tt.n)); got != tt.want {
			t.Errorf("Body(%d) = %q, want %q", tt.n, got, tt.want)
		}
		if got := BodyLen(tt.n); got != len(tt.want) {
			t.Errorf("BodyLen(%d) = %d, want %d", tt.n, got, len(tt.want))
		}
	}

	const big = 3<<20 + 7
	b := Body(big)
	if len(b) != big {
		t.Fatalf("len(Body(%d)) = %d", big, len(b))
	}
	if b[0] != 'p' || string(b[big-2:]) != "ng" {
		t.Errorf("Body(%d) starts %q, ends %q", big, b[:1], b[big-2:])
	}
	if i := bytes.IndexFunc(b[1:big-2], func(r rune) bool { return r != 'o' }); i >= 0 {
		t.Errorf("Body(%d) has %q at %d, want only 'o' between p and ng", big, b[1+i], 1+i)
	}
}

func TestLengthOK(t *testing.T) {
	tests := []struct {
		size, length int
		ok           bool
	}{
		{0, 4, true}, {0, 0, true}, {0, 3, true}, {0, 1, false}, {0, 5, false},
		{1, 4, true}, {1, 1, true}, {1, 3, true}, {1, 2, false}, {1, 0, false},
		{3, 4, true}, {3, 3, true}, {3, 2, false},
		{4, 4, true}, {4, 3, false}, {4, 5, false},
		{5, 5, true}, {5, 4, false}, {1000, 1000, true}, {1000, 999, false}, {1000, 1001, false},
	}
	for _, tt := range tests {
		if got := pingpong.LengthOK(tt.size, tt.length); got != tt.ok {
			t.Errorf("LengthOK(%d, %d) = %v, want %v", tt.size, tt.length, got, tt.ok)
		}
	}
}

func TestCheckMaxSize(t *testing.T) {
	for _, n := range []int{0, 1, pingpong.DefaultMaxSize, pingpong.MaxSizeLimit} {
		if err := pingpong.CheckMaxSize(n); err != nil {
			t.Errorf("CheckMaxSize(%d) = %v", n, err)
		}
	}
	for _, n := range []int{-1, pingpong.MaxSizeLimit + 1, 1000000000000000, math.MaxInt} {
		err := pingpong.CheckMaxSize(n)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), strconv.Itoa(n)) {
			t.Errorf("CheckMaxSize(%d) = %v, want a one-line error naming it", n, err)
		}
	}
}

// serveOn serves h with Serve on a fresh 127.0.0.1 port until the test ends
// and returns its base URL.
func serveOn(t testing.TB, h fasthttp.RequestHandler) string {
	t.Helper()
	return serveWith(t, "Serve", func(ctx context.Context, ln net.Listener) error { return Serve(ctx, ln, h) })
}

// servePongOn serves h on pong's event loops (ServePong) likewise.
func servePongOn(t testing.TB, h *pongHandler) string {
	t.Helper()
	return serveWith(t, "serveLoops", func(ctx context.Context, ln net.Listener) error { return serveLoops(ctx, ln, h) })
}

// serveWith runs serve on a fresh 127.0.0.1 listener until the test ends
// and returns its base URL.
func serveWith(t testing.TB, name string, serve func(context.Context, net.Listener) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, method, url string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp, body
}

// wantPongHeaders checks what the original's net/http sends with a body:
// its sniffed content type, and no Server header.
func wantPongHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q, want text/plain; charset=utf-8", ct)
	}
	if sv := resp.Header.Get("Server"); sv != "" {
		t.Errorf("Server header %q, want none", sv)
	}
}

// dropped reports whether a request got no answer: the connection closed.
func dropped(t *testing.T, method, url string) bool {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s %s: %v, want the connection dropped at once", method, url, err)
			return false
		}
		return true
	}
	resp.Body.Close()
	t.Errorf("%s %s: answered %d, want the connection dropped", method, url, resp.StatusCode)
	return false
}

func TestPongHandler(t *testing.T) {
	const max = 100000
	url := servePongOn(t, newPong(max, chunkSize))

	tests := []struct {
		method, path string
		code         int // 0: no answer, the connection is dropped
		size         int // for 200: expected body is Body(size)
	}{
		{"GET", "/pong/0", 200, 0},
		{"GET", "/pong/1", 200, 1},
		{"GET", "/pong/2", 200, 2},
		{"GET", "/pong/3", 200, 3},
		{"GET", "/pong/4", 200, 4},
		{"GET", "/pong/5", 200, 5},
		{"GET", "/pong/1024", 200, 1024},
		{"GET", "/pong/4097", 200, 4097},
		{"GET", "/pong/" + strconv.Itoa(max), 200, max},
		{"GET", "/pong/007", 200, 7},
		{"GET", "/pong/0000000000000000000000000000005", 200, 5},
		{"GET", "/pong/5?x=1", 200, 5},
		// Any method, as the original's router routes them all.
		{"POST", "/pong/4", 200, 4},
		{"PUT", "/pong/6", 200, 6},
		{"DELETE", "/pong/7", 200, 7},
		// What the original's route [0-9]+ does not match: 404.
		{"GET", "/pong/abc", 404, 0},
		{"GET", "/pong/-1", 404, 0},
		{"GET", "/pong/+5", 404, 0},
		{"GET", "/pong/1e3", 404, 0},
		{"GET", "/pong/1.5", 404, 0},
		{"GET", "/pong/%20", 404, 0},
		{"GET", "/pong/", 404, 0},
		{"GET", "/", 404, 0},
		{"GET", "/pong", 404, 0},
		{"GET", "/ping/4", 404, 0},
		{"GET", "/pong/4/5", 404, 0},
		{"GET", "/pong/5/", 404, 0},
		{"POST", "/pong/x", 404, 0},
		// Above the limit, and beyond int: no answer (the original panics).
		{"GET", "/pong/" + strconv.Itoa(max+1), 0, 0},
		{"GET", "/pong/99999999999999999999999999", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			if tt.code == 0 {
				dropped(t, tt.method, url+tt.path)
				return
			}
			resp, body := get(t, tt.method, url+tt.path)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tt.code, body)
			}
			wantPongHeaders(t, resp)
			if tt.code == 404 {
				if string(body) != "404 page not found\n" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("404: body %q, nosniff %q: want net/http's NotFound", body, resp.Header.Get("X-Content-Type-Options"))
				}
				return
			}
			if want := Body(tt.size); !bytes.Equal(body, want) {
				t.Errorf("body (len %d) differs from Body(%d)", len(body), tt.size)
			}
			if resp.ContentLength != int64(BodyLen(tt.size)) {
				t.Errorf("Content-Length %d, want %d", resp.ContentLength, BodyLen(tt.size))
			}
			if len(resp.TransferEncoding) != 0 {
				t.Errorf("Transfer-Encoding %v, want identity", resp.TransferEncoding)
			}
		})
	}

	// After all the bad requests the server must still serve.
	resp, body := get(t, "GET", url+"/pong/4")
	if resp.StatusCode != 200 || string(body) != "pong" {
		t.Fatalf("after errors: %d %q", resp.StatusCode, body)
	}
}

// TestPongWire checks the answers for sizes 0..5 byte for byte as they
// leave the server, status line and body, on one kept-alive connection.
func TestPongWire(t *testing.T) {
	url := servePongOn(t, newPong(pingpong.DefaultMaxSize, chunkSize))
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	want := []string{"pong", "pong", "pong", "pong", "pong", "poong"}
	for n, w := range want {
		fmt.Fprintf(c, "GET /pong/%d HTTP/1.1\r\nHost: x\r\n\r\n", n)
		status, err := br.ReadString('\n')
		if err != nil || status != "HTTP/1.1 200 OK\r\n" {
			t.Fatalf("n=%d: status line %q, %v", n, status, err)
		}
		hdr := map[string]string{}
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line == "\r\n" {
				break
			}
			k, v, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ": ")
			hdr[k] = v
		}
		if hdr["Content-Length"] != strconv.Itoa(len(w)) || hdr["Content-Type"] != "text/plain; charset=utf-8" {
			t.Errorf("n=%d: headers %v", n, hdr)
		}
		body := make([]byte, len(w))
		if _, err := io.ReadFull(br, body); err != nil || string(body) != w {
			t.Errorf("n=%d: body %q, %v; want %q", n, body, err, w)
		}
	}
}

func TestPongHead(t *testing.T) {
	url := servePongOn(t, newPong(pingpong.DefaultMaxSize, chunkSize))
	for _, n := range []string{"5000", "2", "0"} {
		resp, body := get(t, "HEAD", url+"/pong/"+n)
		if resp.StatusCode != 200 || len(body) != 0 {
			t.Fatalf("HEAD %s: %d, %d body bytes", n, resp.StatusCode, len(body))
		}
		want, _ := strconv.Atoi(n)
		if resp.Header.Get("Content-Length") != strconv.Itoa(BodyLen(want)) {
			t.Errorf("HEAD Content-Length %q, want %d", resp.Header.Get("Content-Length"), BodyLen(want))
		}
		wantPongHeaders(t, resp)
	}
	// The connection still carries a proper answer after HEADs.
	resp, body := get(t, "GET", url+"/pong/5")
	if resp.StatusCode != 200 || string(body) != "poong" {
		t.Errorf("GET after HEAD: %d %q", resp.StatusCode, body)
	}
}

// TestPongStream serves bodies longer than the prepared buffer from it,
// concurrently: bytes and lengths must stay right while bodies are reused.
// Buffers of 3 and 7 bytes hit every chunk boundary case on small bodies;
// the real one serves bodies of several buffers.
func TestPongStream(t *testing.T) {
	for _, buf := range []int{3, 7, chunkSize} {
		t.Run(strconv.Itoa(buf), func(t *testing.T) {
			sizes := []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1023, 4096, 4097, 65537}
			if buf == chunkSize {
				sizes = append(sizes, chunkSize-1, chunkSize, chunkSize+1, chunkSize+2, 3*chunkSize+5)
			}
			max := slices.Max(sizes)
			h := newPong(max, buf)
			url := servePongOn(t, h)
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := range sizes {
						n := sizes[(i+g)%len(sizes)]
						resp, err := http.Get(url + "/pong/" + strconv.Itoa(n))
						if err != nil {
							t.Error(err)
							return
						}
						body, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						if err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(BodyLen(n)) || !bytes.Equal(body, Body(n)) {
							t.Errorf("n=%d: status %d, Content-Length %d, %d bytes, err %v, equal %v",
								n, resp.StatusCode, resp.ContentLength, len(body), err, bytes.Equal(body, Body(n)))
						}
					}
				}(g)
			}
			wg.Wait()
			// Bodies of 32 KiB and more from the real buffer leave by
			// sendfile (when the kernel has memfds).
			if sent := h.sendfiles.Load(); buf == chunkSize && h.file >= 0 && sent < 8*5 {
				t.Errorf("%d bodies sent with sendfile, want the 8×5 of 32 KiB or more", sent)
			}

			resp, body := get(t, "HEAD", url+"/pong/"+strconv.Itoa(max))
			if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != int64(max) {
				t.Errorf("HEAD large: %d, %d bytes, Content-Length %d", resp.StatusCode, len(body), resp.ContentLength)
			}
		})
	}
}

// vmRSS returns the process's resident memory from /proc/self/status.
func vmRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

// TestPongLargeBodyBoundedMemory streams a 256 MiB body (and a default pong
// set up for 4 GiB) while the client reads and discards it: the process's
// resident memory must not grow with the body. Before bodies streamed from
// a fixed buffer, pong held max-size bytes from its start.
func TestPongLargeBodyBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 256 MiB")
	}
	const n = 256 << 20
	runtime.GC()
	before := vmRSS(t)
	url := servePongOn(t, newPong(pingpong.DefaultMaxSize, chunkSize))
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if r := vmRSS(t); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	resp, err := http.Get(url + "/pong/" + strconv.Itoa(n))
	if err != nil {
		t.Fatal(err)
	}
	var head [1]byte
	got, err := io.ReadFull(resp.Body, head[:])
	var tail [2]byte
	rest, err2 := io.Copy(io.Discard, io.TeeReader(resp.Body, lastBytes(tail[:])))
	resp.Body.Close()
	close(stop)
	<-done
	if err != nil || err2 != nil || int64(got)+rest != n || head[0] != 'p' || string(tail[:]) != "ng" {
		t.Fatalf("read %d bytes (%v, %v), first %q, last %q", int64(got)+rest, err, err2, head[:], tail[:])
	}
	if grew := peak.Load() - before; grew > 64<<20 {
		t.Errorf("resident memory grew by %d MiB while streaming a %d MiB body", grew>>20, n>>20)
	} else {
		t.Logf("resident memory grew by %.1f MiB for a %d MiB body", float64(grew)/(1<<20), n>>20)
	}
}

// lastBytes returns a writer that keeps the last len(dst) bytes written in dst.
func lastBytes(dst []byte) io.Writer { return &tailWriter{dst: dst} }

type tailWriter struct{ dst []byte }

func (w *tailWriter) Write(p []byte) (int, error) {
	if len(p) >= len(w.dst) {
		copy(w.dst, p[len(p)-len(w.dst):])
	} else {
		copy(w.dst, w.dst[len(p):])
		copy(w.dst[len(w.dst)-len(p):], p)
	}
	return len(p), nil
}

// TestPongBodyRead checks the stream's Read (used when fasthttp does not
// take WriteTo) and WriteTo after a partial Read, at awkward chunk sizes.
func TestPongBodyRead(t *testing.T) {
	for _, size := range []int{3, 4, 7, 1000} {
		testPongBodyRead(t, newPong(1000, size))
	}
}

func testPongBodyRead(t *testing.T, h *pongHandler) {
	for _, n := range []int{5, 6, 10, 999, 1000} {
		for _, chunk := range []int{1, 2, 3, 7, 4096} {
			b := h.pool.Get().(*pongBody)
			b.n = n
			var got []byte
			p := make([]byte, chunk)
			for {
				m, err := b.Read(p)
				got = append(got, p[:m]...)
				if err == io.EOF {
					break
				}
				if err != nil || m == 0 {
					t.Fatalf("n=%d chunk=%d: Read = %d, %v", n, chunk, m, err)
				}
			}
			if !bytes.Equal(got, Body(n)) {
				t.Errorf("n=%d chunk=%d: read %q", n, chunk, got)
			}
			b.Close()
		}
		for k := 0; k <= n; k++ {
			b := h.pool.Get().(*pongBody)
			b.n = n
			got := make([]byte, k)
			if _, err := io.ReadFull(b, got); err != nil {
				t.Fatal(err)
			}
			var rest bytes.Buffer
			if m, err := b.WriteTo(&rest); err != nil || m != int64(n-k) {
				t.Fatalf("n=%d: WriteTo after %d = %d, %v", n, k, m, err)
			}
			if got = append(got, rest.Bytes()...); !bytes.Equal(got, Body(n)) {
				t.Errorf("n=%d: Read %d + WriteTo gave %q", n, k, got)
			}
			b.Close()
		}
	}
}

// serveCtx runs h on a bare RequestCtx for a GET of path and returns the
// status and body (streams are read to the end and closed); status 0 when
// h dropped the connection.
func serveCtx(h fasthttp.RequestHandler, path string) (int, []byte) {
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(path)
	h(&ctx)
	if ctx.Hijacked() {
		return 0, nil
	}
	body := append([]byte(nil), ctx.Response.Body()...)
	code := ctx.Response.StatusCode()
	ctx.Response.Reset()
	return code, body
}

// TestPongSmallMax checks degenerate maxima still build a valid buffer.
func TestPongSmallMax(t *testing.T) {
	for max := 0; max <= 5; max++ {
		h := NewPongHandler(max)
		for n := 0; n <= max; n++ {
			code, body := serveCtx(h, "/pong/"+strconv.Itoa(n))
			if code != 200 || string(body) != string(Body(n)) {
				t.Errorf("max %d, n %d: %d %q", max, n, code, body)
			}
		}
		if code, _ := serveCtx(h, "/pong/"+strconv.Itoa(max+1)); code != 0 {
			t.Errorf("max %d, n %d: status %d, want the connection dropped", max, max+1, code)
		}
	}
}

// countWriter counts and discards what it is given.
type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// pongOnCtx serves path with h on ctx and writes the response out to bw, as
// fasthttp's connection loop does, then resets ctx's response (which returns
// a streamed body to its pool).
func pongOnCtx(h fasthttp.RequestHandler, ctx *fasthttp.RequestCtx, bw *bufio.Writer) {
	h(ctx)
	ctx.Response.Write(bw)
	bw.Flush()
	ctx.Response.Reset()
}

// TestPongNoAllocs guards the hot path: handler plus writing the response
// must not allocate once the body pool is warm.
func TestPongNoAllocs(t *testing.T) {
	h := NewPongHandler(pingpong.DefaultMaxSize)
	for _, n := range []int{2, 1024, 102400} {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI("/pong/" + strconv.Itoa(n))
		cw := &countWriter{}
		bw := bufio.NewWriterSize(cw, 4096)
		pongOnCtx(h, &ctx, bw) // warm up
		cw.n = 0
		allocs := testing.AllocsPerRun(100, func() {
			pongOnCtx(h, &ctx, bw)
		})
		if allocs != 0 {
			t.Errorf("pong allocates %.1f times per %d-byte request, want 0", allocs, n)
		}
		if per := cw.n / 101; per < n || per > n+200 {
			t.Errorf("wrote %d bytes per %d-byte response", per, n)
		}
	}
}

func benchPong(b *testing.B, n int) {
	path := "/pong/" + strconv.Itoa(n)
	// handler: the handler plus fasthttp writing the response into a
	// discarding buffered writer, without a connection.
	b.Run("handler", func(b *testing.B) {
		h := NewPongHandler(pingpong.DefaultMaxSize)
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(path)
		cw := &countWriter{}
		bw := bufio.NewWriterSize(cw, 4096)
		b.ReportAllocs()
		b.SetBytes(int64(n))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			pongOnCtx(h, &ctx, bw)
		}
		if cw.n < b.N*n {
			b.Fatalf("wrote %d bytes for %d responses of %d", cw.n, b.N, n)
		}
	})
	// loopback includes pong's event loops serving and net/http as the client
	// (client allocations too).
	b.Run("loopback", func(b *testing.B) {
		url := servePongOn(b, newPong(pingpong.DefaultMaxSize, chunkSize)) + path
		client := &http.Client{Transport: pingpong.NewTransport(pingpong.DefaultTimeout, 4)}
		defer client.CloseIdleConnections()
		b.ReportAllocs()
		b.SetBytes(int64(n))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			resp, err := client.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			m, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || m != int64(n) {
				b.Fatalf("read %d bytes, err %v", m, err)
			}
		}
	})
}

func BenchmarkPong1k(b *testing.B)   { benchPong(b, 1024) }
func BenchmarkPong100k(b *testing.B) { benchPong(b, 102400) }
