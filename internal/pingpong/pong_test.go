package pingpong

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestBody(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{0, ""},
		{1, "p"},
		{2, "pn"},
		{3, "png"},
		{4, "pong"},
		{5, "poong"},
		{6, "pooong"},
		{-1, ""},
	}
	for _, tt := range tests {
		if got := string(Body(tt.n)); got != tt.want {
			t.Errorf("Body(%d) = %q, want %q", tt.n, got, tt.want)
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

// serveOn serves h with Serve on a fresh 127.0.0.1 port until the test ends
// and returns its base URL.
func serveOn(t testing.TB, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
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

func TestPongHandler(t *testing.T) {
	const max = 100000
	url := serveOn(t, NewPongHandler(max))

	tests := []struct {
		method, path string
		code         int
		size         int    // for 200: expected body is Body(size)
		errSub       string // for errors: part of the one-line reason
	}{
		{"GET", "/pong/0", 200, 0, ""},
		{"GET", "/pong/1", 200, 1, ""},
		{"GET", "/pong/2", 200, 2, ""},
		{"GET", "/pong/3", 200, 3, ""},
		{"GET", "/pong/4", 200, 4, ""},
		{"GET", "/pong/5", 200, 5, ""},
		{"GET", "/pong/1024", 200, 1024, ""},
		{"GET", "/pong/4097", 200, 4097, ""},
		{"GET", "/pong/" + strconv.Itoa(max), 200, max, ""},
		{"GET", "/pong/007", 200, 7, ""},
		{"GET", "/pong/abc", 400, 0, "non-negative integer"},
		{"GET", "/pong/-1", 400, 0, ">= 0"},
		{"GET", "/pong/+5", 400, 0, "integer"},
		{"GET", "/pong/1e3", 400, 0, "integer"},
		{"GET", "/pong/", 400, 0, "missing"},
		{"GET", "/pong/" + strconv.Itoa(max+1), 400, 0, "maximum"},
		{"GET", "/pong/99999999999999999999999999", 400, 0, "maximum"},
		{"GET", "/", 404, 0, ""},
		{"GET", "/pong", 404, 0, ""},
		{"GET", "/ping/4", 404, 0, ""},
		{"GET", "/pong/4/5", 404, 0, ""},
		{"POST", "/pong/4", 405, 0, "method"},
		{"PUT", "/pong/4", 405, 0, "method"},
		{"DELETE", "/pong/4", 405, 0, "method"},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			resp, body := get(t, tt.method, url+tt.path)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tt.code, body)
			}
			if tt.code == 200 {
				if want := Body(tt.size); !bytes.Equal(body, want) {
					t.Errorf("body (len %d) differs from Body(%d)", len(body), tt.size)
				}
				if resp.ContentLength != int64(tt.size) {
					t.Errorf("Content-Length %d, want %d", resp.ContentLength, tt.size)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "text/plain" {
					t.Errorf("Content-Type %q, want text/plain", ct)
				}
				if len(resp.TransferEncoding) != 0 {
					t.Errorf("Transfer-Encoding %v, want identity", resp.TransferEncoding)
				}
				if sv := resp.Header.Get("Server"); sv != "" {
					t.Errorf("Server header %q, want none", sv)
				}
				return
			}
			if !strings.Contains(string(body), tt.errSub) {
				t.Errorf("body %q does not contain %q", body, tt.errSub)
			}
			if tt.code == 400 && strings.Count(strings.TrimSuffix(string(body), "\n"), "\n") != 0 {
				t.Errorf("reason %q is not one line", body)
			}
			if tt.code == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow %q", resp.Header.Get("Allow"))
			}
		})
	}

	// After all the bad requests the server must still serve.
	resp, body := get(t, "GET", url+"/pong/4")
	if resp.StatusCode != 200 || string(body) != "pong" {
		t.Fatalf("after errors: %d %q", resp.StatusCode, body)
	}
}

func TestPongHead(t *testing.T) {
	url := serveOn(t, NewPongHandler(DefaultMaxSize))
	for _, n := range []string{"5000", "2", "0"} {
		resp, body := get(t, "HEAD", url+"/pong/"+n)
		if resp.StatusCode != 200 || len(body) != 0 {
			t.Fatalf("HEAD %s: %d, %d body bytes", n, resp.StatusCode, len(body))
		}
		if resp.Header.Get("Content-Length") != n {
			t.Errorf("HEAD Content-Length %q, want %s", resp.Header.Get("Content-Length"), n)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/plain" {
			t.Errorf("HEAD %s: Content-Type %q, want text/plain", n, ct)
		}
	}
	// The connection still carries a proper answer after HEADs.
	resp, body := get(t, "GET", url+"/pong/5")
	if resp.StatusCode != 200 || string(body) != "poong" {
		t.Errorf("GET after HEAD: %d %q", resp.StatusCode, body)
	}
}

// TestPongStream serves large bodies from the pooled stream concurrently:
// bytes and lengths must stay right while bodies are reused.
func TestPongStream(t *testing.T) {
	const max = 1 << 20
	url := serveOn(t, NewPongHandler(max))
	sizes := []int{3, 4, 1023, 4096, 4097, 65537, 102400, max - 1, max}
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
				if err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(n) || !bytes.Equal(body, Body(n)) {
					t.Errorf("n=%d: status %d, Content-Length %d, %d bytes, err %v, equal %v",
						n, resp.StatusCode, resp.ContentLength, len(body), err, bytes.Equal(body, Body(n)))
				}
			}
		}(g)
	}
	wg.Wait()

	resp, body := get(t, "HEAD", url+"/pong/"+strconv.Itoa(max))
	if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != max {
		t.Errorf("HEAD large: %d, %d bytes, Content-Length %d", resp.StatusCode, len(body), resp.ContentLength)
	}
}

// TestPongBodyRead checks the stream's Read (used when fasthttp does not
// take WriteTo) and WriteTo after a partial Read, at awkward chunk sizes.
func TestPongBodyRead(t *testing.T) {
	h := newPong(1000)
	for _, n := range []int{3, 4, 5, 10, 999, 1000} {
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
// status and body (streams are read to the end and closed).
func serveCtx(h fasthttp.RequestHandler, path string) (int, []byte) {
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(path)
	h(&ctx)
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
		if code, _ := serveCtx(h, "/pong/"+strconv.Itoa(max+1)); code != 400 {
			t.Errorf("max %d, n %d: status %d, want 400", max, max+1, code)
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
	h := NewPongHandler(DefaultMaxSize)
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
		h := NewPongHandler(DefaultMaxSize)
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
	// loopback includes fasthttp serving and net/http as the client
	// (client allocations too).
	b.Run("loopback", func(b *testing.B) {
		url := serveOn(b, NewPongHandler(DefaultMaxSize)) + path
		client := &http.Client{Transport: newTransport(DefaultTimeout, 4)}
		defer client.CloseIdleConnections()
		b.ReportAllocs()
		b.SetBytes(int64(n))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			resp, err := client.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			m, err := drain(resp.Body)
			resp.Body.Close()
			if err != nil || m != int64(n) {
				b.Fatalf("read %d bytes, err %v", m, err)
			}
		}
	})
}

func BenchmarkPong1k(b *testing.B)   { benchPong(b, 1024) }
func BenchmarkPong100k(b *testing.B) { benchPong(b, 102400) }
