package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/pingpong"

	"github.com/valyala/fasthttp"
)

// closedURL returns an http URL on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// pingPong starts pong (counting its hits) and a ping in front of it.
func pingPong(t *testing.T, pongMax int) (pingURL string, pongHits *atomic.Int64) {
	t.Helper()
	hits := new(atomic.Int64)
	pong := NewPongHandler(pongMax)
	pongURL := serveOn(t, func(ctx *fasthttp.RequestCtx) {
		hits.Add(1)
		pong(ctx)
	})
	ping, err := NewPingHandler(PingConfig{PongURL: pongURL + "/", Retries: 2, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, ping), hits
}

func TestPingRelays(t *testing.T) {
	url, _ := pingPong(t, 1<<20)
	for _, n := range []int{0, 1, 2, 3, 4, 5, 1024, 65537, 1 << 20} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			resp, body := get(t, "GET", url+"/ping/"+strconv.Itoa(n))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d (%q)", resp.StatusCode, body)
			}
			if !bytes.Equal(body, Body(n)) {
				t.Errorf("relayed %d bytes, not Body(%d)", len(body), n)
			}
			if resp.ContentLength != int64(BodyLen(n)) {
				t.Errorf("Content-Length %d, want %d", resp.ContentLength, BodyLen(n))
			}
			wantPongHeaders(t, resp)
		})
	}
}

// TestPingPongRefuses: a size above pong's limit (or beyond int) gets no
// answer from pong, so ping, like the original in front of the original,
// retries and gives up: no error text ever comes back as a good body.
func TestPingPongRefuses(t *testing.T) {
	url, hits := pingPong(t, 100)
	for _, size := range []string{"101", "99999999999999999999999"} {
		before := hits.Load()
		resp, body := get(t, "GET", url+"/ping/"+size)
		if resp.StatusCode != 503 || string(body) != "Service unavailable" {
			t.Errorf("/ping/%s beyond pong's max: %d %q, want 503 Service unavailable", size, resp.StatusCode, body)
		}
		wantPongHeaders(t, resp)
		m := getMPing(t, url+"/mping/"+size)
		if m.Code != 503 || m.Length != 0 || m.Retries != 2 {
			t.Errorf("/mping/%s beyond pong's max: %+v, want code 503, length 0, retries 2", size, m)
		}
		if d := hits.Load() - before; d != 6 {
			t.Errorf("/ping and /mping %s: pong hit %d times, want 3 attempts each", size, d)
		}
	}
}

// TestPingRelaysPongStatus: an answer of pong's other than 200 is relayed
// with its status by /ping and reported with its code by /mping, not
// retried.
func TestPingRelaysPongStatus(t *testing.T) {
	var hits atomic.Int64
	pongURL := serveOn(t, func(ctx *fasthttp.RequestCtx) {
		hits.Add(1)
		ctx.SetStatusCode(418)
		ctx.SetBodyString("teapot")
	})
	ping, err := NewPingHandler(PingConfig{PongURL: pongURL, Retries: 5})
	if err != nil {
		t.Fatal(err)
	}
	url := serveOn(t, ping)
	resp, body := get(t, "GET", url+"/ping/6")
	if resp.StatusCode != 418 || string(body) != "teapot" {
		t.Errorf("/ping: %d %q, want pong's 418 teapot", resp.StatusCode, body)
	}
	m := getMPing(t, url+"/mping/6")
	if m.Code != 418 || m.Length != 6 || m.Retries != 0 {
		t.Errorf("/mping: %+v, want code 418, length 6, retries 0", m)
	}
	if hits.Load() != 2 {
		t.Errorf("pong hit %d times, want once per request", hits.Load())
	}
}

// TestPingNotFound: what the original's routes [0-9]+ do not match is 404,
// and pong never hears of it.
func TestPingNotFound(t *testing.T) {
	url, hits := pingPong(t, 100)
	for _, path := range []string{"/ping/abc", "/ping/-1", "/ping/", "/ping/1.5", "/ping/+1", "/ping/4/",
		"/mping/abc", "/mping/-7", "/mping/", "/mping/1e3", "/pong/4", "/mping", "/", "/mping/4/5"} {
		for _, method := range []string{"GET", "POST"} {
			resp, body := get(t, method, url+path)
			if resp.StatusCode != 404 || string(body) != "404 page not found\n" {
				t.Errorf("%s %s: %d %q, want 404 page not found", method, path, resp.StatusCode, body)
			}
			wantPongHeaders(t, resp)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("pong was contacted %d times for paths ping does not route", n)
	}
	// Any method is served, as the original's router does.
	if m := getMPingMethod(t, "POST", url+"/mping/0004"); m.Code != 200 || m.Length != 4 {
		t.Errorf("POST /mping/0004: %+v", m)
	}
}

func getMPing(t *testing.T, url string) pingpong.MPing { return getMPingMethod(t, "GET", url) }

// getMPingMethod asks for an /mping answer, which comes as the original
// sends it: 200, text/plain (sniffed by net/http), whatever pong did.
func getMPingMethod(t *testing.T, method, url string) pingpong.MPing {
	t.Helper()
	resp, body := get(t, method, url)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: status %d, want 200 (%q)", url, resp.StatusCode, body)
	}
	wantPongHeaders(t, resp)
	m, err := pingpong.ParseMPing(body)
	if err != nil {
		t.Fatalf("%s: %q is no /mping answer: %v", url, body, err)
	}
	return m
}

func TestMPing(t *testing.T) {
	url, hits := pingPong(t, 1<<20)
	for _, n := range []int{0, 1, 3, 4, 1000, 1 << 20} {
		before := hits.Load()
		m := getMPing(t, url+"/mping/"+strconv.Itoa(n))
		if m.Length != BodyLen(n) || m.Code != 200 || m.Retries != 0 {
			t.Errorf("n=%d: %+v, want length %d code 200 retries 0", n, m, BodyLen(n))
		}
		if !(m.Duration > 0 && m.Duration < 10000) {
			t.Errorf("n=%d: duration %v ms, want > 0 and plausible", n, m.Duration)
		}
		if d := hits.Load() - before; d != 1 {
			t.Errorf("n=%d: pong hit %d times, want 1", n, d)
		}
	}
	// Same key order and spacing as the original Go ping.
	_, body := get(t, "GET", url+"/mping/4")
	if !strings.HasPrefix(string(body), `{"length": 4, "code": 200, "retries": 0, "duration": `) {
		t.Errorf("raw answer %q does not match the original format", body)
	}
}

// TestAppendMPing: the answer is what the original's format string prints,
// byte for byte, durations with exponents included.
func TestAppendMPing(t *testing.T) {
	const original = `{"length": %v, "code": %v, "retries": %v, "duration": %v}`
	for _, m := range []pingpong.MPing{
		{Length: 4, Code: 200, Retries: 0, Duration: 1.1897550000000001},
		{Length: 0, Code: 503, Retries: 100, Duration: 110.917285},
		{Length: 1 << 32, Code: 502, Retries: 7, Duration: 0},
		{Duration: 1234567.25}, {Duration: 999999.5}, {Duration: 0.0001}, {Duration: 0.00001234}, {Duration: 1e21}, {Duration: 3},
	} {
		want := fmt.Sprintf(original, m.Length, m.Code, m.Retries, m.Duration)
		if got := string(appendMPing(nil, m)); got != want {
			t.Errorf("appendMPing(%+v) = %s, want %s", m, got, want)
		}
	}
}

func TestPingGivesUp(t *testing.T) {
	for _, retries := range []int{0, 3} {
		h, err := NewPingHandler(PingConfig{PongURL: closedURL(t), Retries: retries, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		url := serveOn(t, h)

		m := getMPing(t, url+"/mping/100")
		if m.Length != 0 || m.Code != 503 || m.Retries != retries {
			t.Errorf("mping gave up with %+v, want length 0 code 503 retries %d", m, retries)
		}
		if m.Duration <= 0 {
			t.Errorf("duration %v, want > 0", m.Duration)
		}
		resp, body := get(t, "GET", url+"/ping/100")
		if resp.StatusCode != 503 || string(body) != "Service unavailable" {
			t.Errorf("ping gave up with %d %q, want the original's 503 Service unavailable", resp.StatusCode, body)
		}
		wantPongHeaders(t, resp)
	}
}

// cutOff answers with raw, then closes the connection: a response cut off
// mid-body when raw announces more than it carries.
func cutOff(ctx *fasthttp.RequestCtx, raw string) {
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) { c.Write([]byte(raw)) }) // fasthttp closes c afterwards
}

// TestPingRelayCutOff: a pong body cut off short of the length pong
// announced is a failed attempt, as in the original (which reads pong's
// body whole first): ping retries and answers 503. Beyond the buffer,
// where ping streams, a body cut off after the relay began reaches the
// client as a broken response, not a short one.
func TestPingRelayCutOff(t *testing.T) {
	var calls atomic.Int64
	big := Body(100000)
	pongURL := serveOn(t, func(ctx *fasthttp.RequestCtx) {
		calls.Add(1)
		if bytes.HasSuffix(ctx.Path(), []byte("/100000")) {
			cutOff(ctx, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"+string(big[:relayBuffer+100]))
			return
		}
		cutOff(ctx, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 50\r\n\r\npo")
	})
	h, err := NewPingHandler(PingConfig{PongURL: pongURL, Retries: 1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	url := serveOn(t, h)
	resp, body := get(t, "GET", url+"/ping/50")
	if resp.StatusCode != 503 || string(body) != "Service unavailable" || calls.Load() != 2 {
		t.Errorf("/ping/50 cut short: %d %q after %d attempts, want 503 Service unavailable after 2", resp.StatusCode, body, calls.Load())
	}
	wantPongHeaders(t, resp)
	// fasthttp drops the connection on the failed body copy, before or
	// after flushing the status line: the client sees an error either way.
	resp2, err := http.Get(url + "/ping/100000")
	if err == nil {
		var body []byte
		body, err = io.ReadAll(resp2.Body)
		resp2.Body.Close()
		if err == nil {
			t.Errorf("relayed cut-off body as a clean %d with %d bytes", resp2.StatusCode, len(body))
		}
	}
	// ping keeps serving; /mping counts each cut-off body as a failure.
	m := getMPing(t, url+"/mping/50")
	if m.Code != 503 || m.Retries != 1 || m.Length != 0 {
		t.Errorf("mping of cut-off bodies: %+v", m)
	}
}

// TestPingFraming: whatever pong's framing and content type (the
// original pong sends bodies above 2 KiB chunked; a pong of one's own may
// send no content type), ping answers as the original ping's clients see
// it: text/plain; charset=utf-8, and a Content-Length.
func TestPingFraming(t *testing.T) {
	pongURL := serveOn(t, func(ctx *fasthttp.RequestCtx) {
		arg, _ := bytes.CutPrefix(ctx.Path(), []byte("/pong/"))
		n, _ := strconv.Atoi(string(arg))
		ctx.Response.Header.SetNoDefaultContentType(true)
		ctx.Response.SetBodyStream(bytes.NewReader(Body(n)), -1) // chunked
	})
	h, err := NewPingHandler(PingConfig{PongURL: pongURL, Retries: 0, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	url := serveOn(t, h)
	for _, n := range []int{0, 5, 2049, relayBuffer, relayBuffer + 1, 300000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			resp, body := get(t, "GET", url+"/ping/"+strconv.Itoa(n))
			if resp.StatusCode != 200 || !bytes.Equal(body, Body(n)) {
				t.Fatalf("%d with %d bytes, want 200 with Body(%d)", resp.StatusCode, len(body), n)
			}
			if resp.ContentLength != int64(BodyLen(n)) || len(resp.TransferEncoding) > 0 {
				t.Errorf("Content-Length %d, Transfer-Encoding %v; want Content-Length %d", resp.ContentLength, resp.TransferEncoding, BodyLen(n))
			}
			wantPongHeaders(t, resp)
		})
	}
}

// TestPingRelayClosesPongBody: every relayed pong response is closed once
// ping wrote it (or dropped it), so pong connections go back to the idle
// pool instead of piling up.
func TestPingRelayClosesPongBody(t *testing.T) {
	var conns atomic.Int64
	pong := NewPongHandler(1 << 20)
	pongURL := serveOn(t, pong)
	h, err := newPing(PingConfig{PongURL: pongURL, Retries: 1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tr := h.rt.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conns.Add(1)
		return dial(ctx, network, addr)
	}
	url := serveOn(t, h.serve)
	for i := 0; i < 50; i++ {
		for _, method := range []string{"GET", "HEAD"} {
			resp, body := get(t, method, url+"/ping/100000")
			if resp.StatusCode != 200 || method == "GET" && len(body) != 100000 {
				t.Fatalf("%s: %d, %d bytes", method, resp.StatusCode, len(body))
			}
		}
	}
	// GETs read pong's body to the end and reuse the connection; a HEAD
	// closes it unread, which costs that connection but must not leak it.
	if n := conns.Load(); n > 51 {
		t.Errorf("%d connections to pong for 50 GETs and 50 HEADs", n)
	}
}

// TestPingRetries makes pong drop its first connections unanswered (as the
// original pong does for a size it cannot parse): each is a failed attempt,
// for /mping and /ping alike, and the count must show up in retries.
// Retries 0 means one attempt and no retry.
func TestPingRetries(t *testing.T) {
	tests := []struct {
		fail, limit int
		code        int
		retries     int
		length      int
	}{
		{fail: 0, limit: 0, code: 200, retries: 0, length: 50},
		{fail: 1, limit: 0, code: 503, retries: 0, length: 0},
		{fail: 0, limit: 3, code: 200, retries: 0, length: 50},
		{fail: 2, limit: 3, code: 200, retries: 2, length: 50},
		{fail: 3, limit: 3, code: 200, retries: 3, length: 50},
		{fail: 4, limit: 3, code: 503, retries: 3, length: 0},
		{fail: 200, limit: pingpong.DefaultRetries, code: 503, retries: 100, length: 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("fail%d-of-%d", tt.fail, tt.limit), func(t *testing.T) {
			var calls atomic.Int64
			pong := NewPongHandler(100)
			pongURL := serveOn(t, func(ctx *fasthttp.RequestCtx) {
				if calls.Add(1) <= int64(tt.fail) {
					dropConn(ctx)
					return
				}
				pong(ctx)
			})
			h, err := NewPingHandler(PingConfig{PongURL: pongURL, Retries: tt.limit, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			url := serveOn(t, h)
			m := getMPing(t, url+"/mping/50")
			if m.Code != tt.code || m.Retries != tt.retries || m.Length != tt.length {
				t.Errorf("got %+v, want code %d retries %d length %d", m, tt.code, tt.retries, tt.length)
			}
			if want := int64(min(tt.fail, tt.limit) + 1); calls.Load() != want {
				t.Errorf("/mping: pong called %d times, want %d", calls.Load(), want)
			}
			// /ping makes as many attempts, and relays the same outcome.
			calls.Store(0)
			resp, body := get(t, "GET", url+"/ping/50")
			if want := int64(min(tt.fail, tt.limit) + 1); calls.Load() != want {
				t.Errorf("/ping: pong called %d times, want %d", calls.Load(), want)
			}
			if tt.code == 200 && (resp.StatusCode != 200 || !bytes.Equal(body, Body(50))) || tt.code == 503 && resp.StatusCode != 503 {
				t.Errorf("/ping: %d with %d bytes, want %d", resp.StatusCode, len(body), tt.code)
			}
		})
	}
}

// TestPingWrongLength: a pong that answers 200 with a body that is not a
// whole pong body for the size is no good message: /mping reports code 502
// with the length it got (no retry: it was an answer), /ping answers 502
// when it knows before answering (the length announced, or a body it read
// whole) and drops the connection when a streamed body of unannounced
// length ends wrong. The lengths the other pongs answer for sizes below 4
// pass.
func TestPingWrongLength(t *testing.T) {
	var calls atomic.Int64
	pongURL := serveOn(t, func(ctx *fasthttp.RequestCtx) {
		calls.Add(1)
		arg, _ := bytes.CutPrefix(ctx.Path(), []byte("/pong/"))
		n, _ := strconv.Atoi(string(arg))
		body := Body(n)
		switch {
		case n == 7: // one byte short, announced
			body = body[:6]
		case n == 8: // one byte long, announced
			body = append(body, 'o')
		case n == 9: // right length, unannounced (chunked)
			ctx.Response.SetBodyStream(bytes.NewReader(body), -1)
			return
		case n == 10: // one byte short, unannounced (chunked)
			ctx.Response.SetBodyStream(bytes.NewReader(body[:9]), -1)
			return
		case n == 200000: // one byte short, unannounced, beyond the buffer
			ctx.Response.SetBodyStream(bytes.NewReader(body[:n-1]), -1)
			return
		case n == 200001: // one byte long, unannounced, beyond the buffer
			ctx.Response.SetBodyStream(bytes.NewReader(append(body, 'o')), -1)
			return
		case n == 200003, n == 64<<10: // right length, unannounced, beyond the buffer or filling it
			ctx.Response.SetBodyStream(bytes.NewReader(body), -1)
			return
		case n == 1: // cnperf's pong up to 0.1
			body = []byte("p")
		case n == 2: // the Dart pong
			body = []byte("png")
		}
		ctx.SetBody(body)
	})
	h, err := NewPingHandler(PingConfig{PongURL: pongURL, Retries: 3})
	if err != nil {
		t.Fatal(err)
	}
	url := serveOn(t, h)
	tests := []struct {
		n, code, length int
	}{
		{7, 502, 6}, {8, 502, 9}, {9, 200, 9}, {10, 502, 9}, {1, 200, 1}, {2, 200, 3}, {3, 200, 4},
		{200000, 502, 199999}, {200001, 502, 200002}, {200003, 200, 200003}, {64 << 10, 200, 64 << 10},
	}
	for _, tt := range tests {
		calls.Store(0)
		m := getMPing(t, url+"/mping/"+strconv.Itoa(tt.n))
		if m.Code != tt.code || m.Length != tt.length || m.Retries != 0 || calls.Load() != 1 {
			t.Errorf("/mping/%d: %+v after %d attempts, want code %d length %d in one", tt.n, m, calls.Load(), tt.code, tt.length)
		}
		resp, err := http.Get(url + "/ping/" + strconv.Itoa(tt.n))
		var body []byte
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		switch {
		case tt.code == 200:
			if err != nil || resp.StatusCode != 200 || len(body) != tt.length {
				t.Errorf("/ping/%d: %v, %d bytes, want 200 with %d", tt.n, err, len(body), tt.length)
			}
		case tt.n >= 200000: // streamed, unannounced: only the end shows it, so the connection drops
			if err == nil {
				t.Errorf("/ping/%d: clean %d with %d bytes, want a broken response", tt.n, resp.StatusCode, len(body))
			}
		default:
			if err != nil || resp.StatusCode != 502 || !strings.Contains(string(body), "pong answered") {
				t.Errorf("/ping/%d: %v, %q, want 502", tt.n, err, body)
			}
		}
	}
}

func TestPingConfig(t *testing.T) {
	p, err := newPing(PingConfig{PongURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if p.retries != 0 || p.timeout != pingpong.DefaultTimeout {
		t.Errorf("zero config: retries %d timeout %v, want 0 (no retry) and %v", p.retries, p.timeout, pingpong.DefaultTimeout)
	}
	tr := p.rt.(*http.Transport)
	if tr.Proxy != nil || !tr.DisableCompression || tr.MaxIdleConnsPerHost < 256 {
		t.Errorf("transport: proxy set %v, compression off %v, idle/host %d",
			tr.Proxy != nil, tr.DisableCompression, tr.MaxIdleConnsPerHost)
	}
	for _, cfg := range []PingConfig{
		{Retries: -1}, {Retries: pingpong.MaxRetries + 1}, {Retries: math.MaxInt},
		{Timeout: -time.Second}, {Timeout: pingpong.MaxTimeout + 1}, {Timeout: math.MaxInt64},
	} {
		cfg.PongURL = "http://127.0.0.1:1"
		if _, err := NewPingHandler(cfg); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want a one-line error", cfg, err)
		}
	}
	for _, cfg := range []PingConfig{{Retries: pingpong.MaxRetries, Timeout: pingpong.MaxTimeout}, {Retries: pingpong.DefaultRetries, Timeout: time.Nanosecond}} {
		cfg.PongURL = "http://127.0.0.1:1"
		if _, err := NewPingHandler(cfg); err != nil {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}

func TestNewPingHandlerBadURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://h/", "http://", "http://h:1/?x=1", "http://u:p@h/", "http://[::1"} {
		if _, err := NewPingHandler(PingConfig{PongURL: u}); err == nil {
			t.Errorf("PongURL %q accepted", u)
		}
	}
	for _, u := range []string{"http://198.18.0.3:8080", "http://pong:8080/", "https://h/prefix"} {
		if _, err := NewPingHandler(PingConfig{PongURL: u}); err != nil {
			t.Errorf("PongURL %q rejected: %v", u, err)
		}
	}
}
