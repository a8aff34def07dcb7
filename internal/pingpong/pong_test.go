package pingpong

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
	srv := httptest.NewServer(NewPongHandler(max))
	defer srv.Close()

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
			resp, body := get(t, tt.method, srv.URL+tt.path)
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
	resp, body := get(t, "GET", srv.URL+"/pong/4")
	if resp.StatusCode != 200 || string(body) != "pong" {
		t.Fatalf("after errors: %d %q", resp.StatusCode, body)
	}
}

func TestPongHead(t *testing.T) {
	srv := httptest.NewServer(NewPongHandler(DefaultMaxSize))
	defer srv.Close()
	resp, body := get(t, "HEAD", srv.URL+"/pong/5000")
	if resp.StatusCode != 200 || len(body) != 0 {
		t.Fatalf("HEAD: %d, %d body bytes", resp.StatusCode, len(body))
	}
	if resp.Header.Get("Content-Length") != "5000" {
		t.Errorf("HEAD Content-Length %q, want 5000", resp.Header.Get("Content-Length"))
	}
}

// TestPongSendfile exercises the file-backed path for large bodies: bytes,
// lengths and concurrent use of the reader pool.
func TestPongSendfile(t *testing.T) {
	const max = 1 << 20
	h := NewPongHandler(max).(*pongHandler)
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, body := get(t, "GET", srv.URL+"/pong/1000")
	if resp.StatusCode != 200 || len(body) != 1000 {
		t.Fatalf("small body: %d, %d bytes", resp.StatusCode, len(body))
	}
	if h.file.ready.Load() {
		t.Fatal("file created although no large body was asked for")
	}
	// The first large request is served from memory and starts the file.
	resp, body = get(t, "GET", srv.URL+"/pong/"+strconv.Itoa(sendfileMin))
	if resp.StatusCode != 200 || !bytes.Equal(body, Body(sendfileMin)) {
		t.Fatalf("first large body: %d, %d bytes", resp.StatusCode, len(body))
	}
	for deadline := time.Now().Add(5 * time.Second); !h.file.ready.Load() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !h.file.ready.Load() {
		if runtime.GOOS == "linux" {
			t.Fatal("body file not ready after 5 s")
		}
		t.Skip("no body file on this system; memory path only")
	}

	sizes := []int{sendfileMin - 1, sendfileMin, sendfileMin + 1, 65537, 102400, max - 1, max}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := range sizes {
				n := sizes[(i+g)%len(sizes)]
				resp, err := http.Get(srv.URL + "/pong/" + strconv.Itoa(n))
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

	resp, body = get(t, "HEAD", srv.URL+"/pong/"+strconv.Itoa(max))
	if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != max {
		t.Errorf("HEAD large: %d, %d bytes, Content-Length %d", resp.StatusCode, len(body), resp.ContentLength)
	}
	h.file.mu.Lock()
	idle := len(h.file.free)
	h.file.mu.Unlock()
	if idle < 1 || idle > maxFreeReaders {
		t.Errorf("%d idle readers after the burst, want 1..%d", idle, maxFreeReaders)
	}
}

// TestPongSmallMax checks degenerate maxima still build a valid buffer.
func TestPongSmallMax(t *testing.T) {
	for max := 0; max <= 5; max++ {
		h := NewPongHandler(max)
		for n := 0; n <= max; n++ {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/pong/"+strconv.Itoa(n), nil))
			if rec.Code != 200 || rec.Body.String() != string(Body(n)) {
				t.Errorf("max %d, n %d: %d %q", max, n, rec.Code, rec.Body.String())
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/pong/"+strconv.Itoa(max+1), nil))
		if rec.Code != 400 {
			t.Errorf("max %d, n %d: status %d, want 400", max, max+1, rec.Code)
		}
	}
}

// TestPongNoAllocs guards the hot path: a size below the Content-Length
// cache must not allocate in the handler.
func TestPongNoAllocs(t *testing.T) {
	h := NewPongHandler(DefaultMaxSize)
	w := &discardWriter{h: http.Header{}}
	r := httptest.NewRequest("GET", "/pong/1024", nil)
	allocs := testing.AllocsPerRun(100, func() {
		clear(w.h)
		w.n = 0
		h.ServeHTTP(w, r)
	})
	if allocs != 0 {
		t.Errorf("pong handler allocates %.1f times per 1 kB request, want 0", allocs)
	}
	if w.n != 1024 {
		t.Errorf("wrote %d bytes, want 1024", w.n)
	}
}

// discardWriter is a ResponseWriter that costs nothing, so benchmarks see
// the handler's own work.
type discardWriter struct {
	h    http.Header
	n    int
	code int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(code int)        { d.code = code }
func (d *discardWriter) Write(p []byte) (int, error) { d.n = len(p) + d.n; return len(p), nil }

func benchPong(b *testing.B, n int) {
	path := "/pong/" + strconv.Itoa(n)
	b.Run("handler", func(b *testing.B) {
		h := NewPongHandler(DefaultMaxSize)
		w := &discardWriter{h: http.Header{}}
		r := httptest.NewRequest("GET", path, nil)
		b.ReportAllocs()
		b.SetBytes(int64(n))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			clear(w.h)
			w.n = 0
			h.ServeHTTP(w, r)
		}
		if w.n != n {
			b.Fatalf("wrote %d bytes, want %d", w.n, n)
		}
	})
	// loopback includes net/http on both ends (client allocations too).
	b.Run("loopback", func(b *testing.B) {
		srv := httptest.NewServer(NewPongHandler(DefaultMaxSize))
		defer srv.Close()
		client := &http.Client{Transport: newTransport(DefaultTimeout, 4)}
		url := srv.URL + path
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
