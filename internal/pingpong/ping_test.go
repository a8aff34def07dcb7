package pingpong

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
			if resp.ContentLength != int64(n) {
				t.Errorf("Content-Length %d, want %d", resp.ContentLength, n)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/plain" {
				t.Errorf("Content-Type %q, want pong's text/plain", ct)
			}
		})
	}
}

func TestPingRelaysPongStatus(t *testing.T) {
	url, _ := pingPong(t, 100)
	resp, body := get(t, "GET", url+"/ping/101")
	if resp.StatusCode != 400 || !strings.Contains(string(body), "maximum") {
		t.Errorf("/ping beyond pong's max: %d %q, want pong's 400", resp.StatusCode, body)
	}
	m := getMPing(t, url+"/mping/101", 200)
	if m.Code != 400 || m.Length != len(body) || m.Retries != 0 {
		t.Errorf("/mping beyond pong's max: %+v, want code 400, length %d", m, len(body))
	}
}

func TestPingRejectsBadSize(t *testing.T) {
	url, hits := pingPong(t, 100)
	tests := []struct {
		path string
		code int
	}{
		{"/ping/abc", 400},
		{"/ping/-1", 400},
		{"/ping/", 400},
		{"/ping/1.5", 400},
		{"/mping/abc", 400},
		{"/mping/-7", 400},
		{"/mping/99999999999999999999999", 400},
		{"/pong/4", 404},
		{"/mping", 404},
		{"/", 404},
	}
	for _, tt := range tests {
		resp, body := get(t, "GET", url+tt.path)
		if resp.StatusCode != tt.code {
			t.Errorf("%s: status %d, want %d (%q)", tt.path, resp.StatusCode, tt.code, body)
		}
	}
	resp, _ := get(t, "POST", url+"/mping/4")
	if resp.StatusCode != 405 {
		t.Errorf("POST /mping/4: status %d, want 405", resp.StatusCode)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("pong was contacted %d times for invalid requests", n)
	}
}

func getMPing(t *testing.T, url string, wantStatus int) MPing {
	t.Helper()
	resp, body := get(t, "GET", url)
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s: status %d, want %d (%q)", url, resp.StatusCode, wantStatus, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var m MPing
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %q is not MPing JSON: %v", url, body, err)
	}
	return m
}

func TestMPing(t *testing.T) {
	url, hits := pingPong(t, 1<<20)
	for _, n := range []int{0, 4, 1000, 1 << 20} {
		before := hits.Load()
		m := getMPing(t, url+"/mping/"+strconv.Itoa(n), 200)
		if m.Length != n || m.Code != 200 || m.Retries != 0 {
			t.Errorf("n=%d: %+v, want length %d code 200 retries 0", n, m, n)
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

func TestPingGivesUp(t *testing.T) {
	const retries = 3
	h, err := NewPingHandler(PingConfig{PongURL: closedURL(t), Retries: retries, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	url := serveOn(t, h)

	m := getMPing(t, url+"/mping/100", 503)
	if m.Length != 0 || m.Code != 503 || m.Retries != retries {
		t.Errorf("mping gave up with %+v, want length 0 code 503 retries %d", m, retries)
	}
	if m.Duration <= 0 {
		t.Errorf("duration %v, want > 0", m.Duration)
	}
	resp, body := get(t, "GET", url+"/ping/100")
	if resp.StatusCode != 503 || !strings.Contains(string(body), "pong server is not answering") {
		t.Errorf("ping gave up with %d %q", resp.StatusCode, body)
	}
}

// cutOff answers with raw, then closes the connection: a response cut off
// mid-body when raw announces more than it carries.
func cutOff(ctx *fasthttp.RequestCtx, raw string) {
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) { c.Write([]byte(raw)) }) // fasthttp closes c afterwards
}

// TestPingRelayCutOff: a pong body cut off mid-way after ping started its
// relay must reach the client as a broken response, not a short one.
func TestPingRelayCutOff(t *testing.T) {
	pongURL := serveOn(t, func(ctx *fasthttp.RequestCtx) {
		cutOff(ctx, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 50\r\n\r\npo")
	})
	h, err := NewPingHandler(PingConfig{PongURL: pongURL, Retries: 1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	url := serveOn(t, h)
	// fasthttp drops the connection on the failed body copy, before or
	// after flushing the status line: the client sees an error either way.
	resp, err := http.Get(url + "/ping/50")
	if err == nil {
		var body []byte
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Errorf("relayed cut-off body as a clean %d with %d bytes", resp.StatusCode, len(body))
		}
	}
	// ping keeps serving; /mping counts each cut-off body as a failure.
	m := getMPing(t, url+"/mping/50", 503)
	if m.Code != 503 || m.Retries != 1 || m.Length != 0 {
		t.Errorf("mping of cut-off bodies: %+v", m)
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

// TestPingRetries makes pong cut its first answers short: each cut-off body
// is a failed attempt, and the count must show up in retries.
func TestPingRetries(t *testing.T) {
	tests := []struct {
		fail, limit  int
		status, code int
		retries      int
		length       int
	}{
		{fail: 0, limit: 3, status: 200, code: 200, retries: 0, length: 50},
		{fail: 2, limit: 3, status: 200, code: 200, retries: 2, length: 50},
		{fail: 3, limit: 3, status: 200, code: 200, retries: 3, length: 50},
		{fail: 4, limit: 3, status: 503, code: 503, retries: 3, length: 0},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.fail), func(t *testing.T) {
			var calls atomic.Int64
			pong := NewPongHandler(100)
			pongURL := serveOn(t, func(ctx *fasthttp.RequestCtx) {
				if calls.Add(1) <= int64(tt.fail) {
					cutOff(ctx, "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\npo")
					return
				}
				pong(ctx)
			})
			h, err := NewPingHandler(PingConfig{PongURL: pongURL, Retries: tt.limit, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			m := getMPing(t, serveOn(t, h)+"/mping/50", tt.status)
			if m.Code != tt.code || m.Retries != tt.retries || m.Length != tt.length {
				t.Errorf("got %+v, want code %d retries %d length %d", m, tt.code, tt.retries, tt.length)
			}
			if want := int64(min(tt.fail, tt.limit) + 1); calls.Load() != want {
				t.Errorf("pong called %d times, want %d", calls.Load(), want)
			}
		})
	}
}

func TestPingDefaults(t *testing.T) {
	p, err := newPing(PingConfig{PongURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if p.retries != DefaultRetries || p.timeout != DefaultTimeout {
		t.Errorf("defaults: retries %d timeout %v", p.retries, p.timeout)
	}
	tr := p.rt.(*http.Transport)
	if tr.Proxy != nil || !tr.DisableCompression || tr.MaxIdleConnsPerHost < 256 {
		t.Errorf("transport: proxy set %v, compression off %v, idle/host %d",
			tr.Proxy != nil, tr.DisableCompression, tr.MaxIdleConnsPerHost)
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
