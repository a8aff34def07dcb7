package server

import (
	"bytes"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/workload/pingpong"

	"github.com/valyala/fasthttp"
)

// Fuzz targets. Plain `go test` runs their seeds; fuzz one with e.g.
// go test -run='^$' -fuzz=FuzzPongPath -fuzztime=60s ./internal/pingpong/

// fuzzMax is the pong limit in the fuzz targets: bodies stay small, and the
// pong buffer is 7 bytes, so most bodies stream in several chunks.
const fuzzMax = 1 << 16

var pathSeeds = []string{
	"/pong/0", "/pong/3", "/pong/4", "/pong/5", "/pong/65536", "/pong/65537", "/pong/007",
	"/pong/99999999999999999999", "/pong/9223372036854775807", "/pong/", "/pong/abc", "/pong/-1",
	"/pong/+1", "/pong/1e3", "/pong/4/", "/pong//4", "/pong/./4", "/pong/../pong/4", "/pong/%34",
	"/pong/4?x=1", "/pong/4#f", "/ping/4", "/mping/4", "/mping/0", "/mping/01", "/mping/-1", "/mping/",
	"/ping/1000", "/mping/abc", "/", "", "*", "http://h/pong/4", "/PONG/4", "/pong/\x00", "/pong/4\r\n",
	"/tcpinfo", "/tcpinfo/", "/TCPINFO", "/tcpinfo?x=1",
}

// digitsSize is the oracle: what the original's route [0-9]+ accepts, and
// the size it stands for (ok false beyond uint64, always above any limit).
func digitsSize(arg []byte) (n uint64, digits, ok bool) {
	if len(arg) == 0 {
		return 0, false, false
	}
	for _, c := range arg {
		if c < '0' || c > '9' {
			return 0, false, false
		}
	}
	n, err := strconv.ParseUint(string(arg), 10, 64)
	return n, true, err == nil
}

// FuzzPongPath: whatever the path and method, pong answers 404 with
// net/http's text, the original's body for a size within its limit, or
// drops the connection above it; never anything else, never a panic.
func FuzzPongPath(f *testing.F) {
	for _, p := range pathSeeds {
		f.Add("GET", p)
	}
	f.Add("POST", "/pong/5")
	f.Add("HEAD", "/pong/70000")
	f.Add("\x00", "/pong/5")
	h := newPong(fuzzMax, 7)
	f.Fuzz(func(t *testing.T, method, path string) {
		var req fasthttp.Request
		req.Header.SetMethod(method)
		req.SetRequestURI(path)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, nil, nil)
		h.serve(&ctx)
		defer ctx.Response.Reset()

		arg, routed := bytes.CutPrefix(ctx.Path(), prefixPong)
		n, digits, inInt := digitsSize(arg)
		tcpInfo := string(ctx.Path()) == TCPInfoPath && ctx.IsGet()
		switch {
		case tcpInfo:
			info, err := ReadTCPInfo(bytes.NewReader(ctx.Response.Body()))
			if ctx.Response.StatusCode() != 200 || err != nil || info.Pong == nil || info.Ping != nil {
				t.Fatalf("%s %q: %d %q (%v), want pong's TCP_INFO", method, path, ctx.Response.StatusCode(), ctx.Response.Body(), err)
			}
		case !routed || !digits:
			if ctx.Hijacked() || ctx.Response.StatusCode() != 404 || string(ctx.Response.Body()) != "404 page not found\n" {
				t.Fatalf("%s %q (path %q): %d %q, want 404", method, path, ctx.Path(), ctx.Response.StatusCode(), ctx.Response.Body())
			}
		case !inInt || n > fuzzMax:
			if !ctx.Hijacked() {
				t.Fatalf("%s %q: answered %d, want the connection dropped above the limit", method, path, ctx.Response.StatusCode())
			}
		default:
			body := ctx.Response.Body()
			if ctx.Hijacked() || ctx.Response.StatusCode() != 200 || !bytes.Equal(body, Body(int(n))) ||
				string(ctx.Response.Header.ContentType()) != "text/plain; charset=utf-8" {
				t.Fatalf("%s %q: %d, %d bytes, type %q; want Body(%d)", method, path,
					ctx.Response.StatusCode(), len(body), ctx.Response.Header.ContentType(), n)
			}
		}
	})
}

// fakePong answers ping's requests without a network, as mode says: 0 the
// right body, 1 one byte short, 2 one byte long, 3 a transport error, 4 a
// 404 with text, 5 the right body without a length, 6 a short body
// without a length, 7 a body cut off.
type fakePong struct {
	t     *testing.T
	mode  byte
	calls int
}

func (p *fakePong) RoundTrip(req *http.Request) (*http.Response, error) {
	p.calls++
	if req.URL.Path == TCPInfoPath {
		// pong's TCP_INFO, which ping asks for its own TCPInfoPath.
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: req,
			Body: io.NopCloser(strings.NewReader(`{"pong":{"closed":{"n":2,"retrans":1},"live":{"n":1}}}`))}, nil
	}
	arg, ok := strings.CutPrefix(req.URL.Path, "/pong/")
	n, digits, inInt := digitsSize([]byte(arg))
	if !ok || !digits {
		p.t.Fatalf("ping asked pong for %q", req.URL.Path)
	}
	if !inInt || n > fuzzMax {
		return nil, errors.New("connection closed") // pong drops it
	}
	body := Body(int(n))
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, Request: req}
	length := int64(len(body))
	var r io.Reader
	switch p.mode % 8 {
	case 1:
		body = body[:len(body)-1]
		length--
	case 2:
		body = append(body, 'o')
		length++
	case 3:
		return nil, errors.New("connection refused")
	case 4:
		resp.StatusCode, body = 404, []byte("404 page not found\n")
		length = int64(len(body))
	case 5:
		length = -1
	case 6:
		body, length = body[:len(body)-1], -1
	case 7:
		r = io.MultiReader(bytes.NewReader(body[:len(body)/2]), errReader{})
	}
	if r == nil {
		r = bytes.NewReader(body)
	}
	resp.Body, resp.ContentLength = io.NopCloser(r), length
	return resp, nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// FuzzPingPath: whatever the path, ping answers 404 (pong untouched), or
// asks pong for the digits as they came and answers as the original does:
// /mping 200 with JSON whose code is 200 only for a whole body, /ping the
// body or a failure status, never a wrong body as a good one.
func FuzzPingPath(f *testing.F) {
	for i, p := range pathSeeds {
		f.Add(p, byte(i))
	}
	for mode := byte(0); mode < 8; mode++ {
		f.Add("/mping/4", mode)
		f.Add("/ping/9", mode)
	}
	h, err := newPing(PingConfig{PongURL: "http://pong:1", Retries: 2})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string, mode byte) {
		pong := &fakePong{t: t, mode: mode}
		h.rt = pong
		var req fasthttp.Request
		req.SetRequestURI(path)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, nil, nil)
		h.serve(&ctx)
		defer ctx.Response.Reset()
		status, body := ctx.Response.StatusCode(), ctx.Response.Body()

		p := ctx.Path()
		if string(p) == TCPInfoPath {
			info, err := ReadTCPInfo(bytes.NewReader(body))
			if status != 200 || err != nil || info.Relay == nil || info.Pong == nil || info.Pong.Closed.N != 2 || pong.calls != 1 {
				t.Fatalf("%q: %d %q (%v) after %d pong calls, want ping's sides and pong's, asked once", path, status, body, err, pong.calls)
			}
			return
		}
		arg, isPing := bytes.CutPrefix(p, prefixPing)
		marg, isMPing := bytes.CutPrefix(p, prefixMPing)
		if isMPing {
			arg = marg
		}
		n, digits, inInt := digitsSize(arg)
		if !(isPing || isMPing) || !digits {
			if status != 404 || pong.calls != 0 {
				t.Fatalf("%q: %d after %d pong calls, want 404 and none", path, status, pong.calls)
			}
			return
		}
		refused := !inInt || n > fuzzMax || mode%8 == 3
		var sent int // body length pong sends in modes 0, 1, 2, 5, 6
		if !refused {
			sent = BodyLen(int(n)) + map[byte]int{1: -1, 2: 1, 6: -1}[mode%8]
		}
		whole := !refused && strings.IndexByte("\x00\x01\x02\x05\x06", mode%8) >= 0 && pingpong.LengthOK(int(n), sent)
		if isMPing {
			m, err := pingpong.ParseMPing(body)
			if status != 200 || err != nil {
				t.Fatalf("%q mode %d: %d %q (%v), want 200 and /mping JSON", path, mode, status, body, err)
			}
			switch {
			case refused:
				if m.Code != 503 || m.Length != 0 || m.Retries != 2 || pong.calls != 3 {
					t.Fatalf("%q mode %d: %+v after %d calls, want the give-up answer after 3", path, mode, m, pong.calls)
				}
			case mode%8 == 7:
				if m.Code != 503 || pong.calls != 3 {
					t.Fatalf("%q mode %d: %+v, want cut-off bodies retried", path, mode, m)
				}
			case whole:
				if m.Code != 200 || m.Length != sent || m.Retries != 0 {
					t.Fatalf("%q mode %d: %+v, want code 200, length %d", path, mode, m, sent)
				}
			case mode%8 == 4:
				if m.Code != 404 {
					t.Fatalf("%q mode %d: %+v, want pong's 404", path, mode, m)
				}
			default:
				if m.Code != 502 || pong.calls != 1 {
					t.Fatalf("%q mode %d: %+v after %d calls, want 502 at once for a wrong length", path, mode, m, pong.calls)
				}
			}
			return
		}
		switch {
		case refused:
			if status != 503 || string(body) != "Service unavailable" {
				t.Fatalf("%q mode %d: %d %q, want 503 Service unavailable", path, mode, status, body)
			}
		case whole:
			if status != 200 || len(body) != sent || !bytes.HasPrefix(body, []byte("p")) {
				t.Fatalf("%q mode %d: %d with %d bytes, want pong's %d", path, mode, status, len(body), sent)
			}
		case mode%8 == 4:
			if status != 404 {
				t.Fatalf("%q mode %d: %d, want pong's 404 relayed", path, mode, status)
			}
		case mode%8 == 1 || mode%8 == 2:
			if status != 502 {
				t.Fatalf("%q mode %d: %d %q, want 502 for an announced wrong length", path, mode, status, body)
			}
		default: // a body that breaks off or ends wrong: fasthttp drops the connection
			if status == 200 && bytes.Equal(body, Body(int(n))) {
				t.Fatalf("%q mode %d: relayed a broken body as a whole one", path, mode)
			}
		}
	})
}

// FuzzParseMPing: siege's reading of ping's answer never panics, accepts
// only plausible values, and reads back what ping writes.
func FuzzParseMPing(f *testing.F) {
	for _, s := range []string{
		`{"length": 4, "code": 200, "retries": 0, "duration": 1.1897550000000001}`,
		`{"length": 0, "code": 503, "retries": 100, "duration": 110.917285}`,
		`{"length": 4.0, "code": 2e2, "retries": 0, "duration": 1e-05}`,
		`{"length": "4", "code": 200, "retries": 0, "duration": 1}`,
		`{"length": 4, "code": 200, "retries": 0, "duration": 1, "length": 5}`,
		`{"LENGTH": 4, "Code": 200, "retries": 0, "duration": 1}`,
		`{"length": -0, "code": 200, "retries": 0, "duration": -0}`,
		`{"length": 9007199254740993, "code": 200, "retries": 0, "duration": 1}`,
		`{"length": 4, "code": 200, "retries": 0, "duration": 1e999}`,
		`{}`, `null`, `[]`, `"x"`, `404 page not found`, ``, `{"length": 4`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := pingpong.ParseMPing(body)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error %q is not one line", err)
			}
			return
		}
		if m.Length < 0 || m.Length > maxWhole || m.Code < 100 || m.Code > maxHTTPish || m.Retries < 0 || m.Retries > maxWhole ||
			!(m.Duration >= 0) || math.IsInf(m.Duration, 0) {
			t.Fatalf("pingpong.ParseMPing(%q) accepted %+v", body, m)
		}
		back, err := pingpong.ParseMPing(appendMPing(nil, m))
		if err != nil || back != m {
			t.Fatalf("%+v written as %s reads back as %+v, %v", m, appendMPing(nil, m), back, err)
		}
	})
}

// The bounds pingpong.ParseMPing holds an answer to.
const (
	maxWhole   = 1 << 53
	maxHTTPish = 999
)
