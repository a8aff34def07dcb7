package server

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"

	"github.com/valyala/fasthttp"
)

// PingConfig tells the ping server where pong is and how hard to try.
type PingConfig struct {
	PongURL string        // base URL of pong, e.g. http://198.18.0.3:8080
	Retries int           // attempts after a failed first one: 0 = none; 0..MaxRetries
	Timeout time.Duration // per attempt; 0 means pingpong.DefaultTimeout; at most pingpong.MaxTimeout
	// Answers, if set, is the book of the connections ping accepts (the
	// server's listener wrapped by it): TCPInfoPath reports it.
	Answers *tcpinfo.Book
}

// relayBuffer is the largest pong body ping reads whole before it answers
// /ping (and the buffer /mping reads bodies through): 4096 connections'
// worth of it is 256 MiB at most.
const relayBuffer = 64 << 10

type pingHandler struct {
	base     string // PongURL without trailing slash, + "/pong/"
	pongBase string // PongURL without trailing slash
	answers  *tcpinfo.Book
	relay    tcpinfo.Book // ping's connections to pong
	retries  int
	timeout  time.Duration
	rt       http.RoundTripper
	bufs     sync.Pool // of *[]byte: read buffers for pong bodies
}

// NewPingHandler serves /ping/{n} (relay pong's body) and /mping/{n} (time
// the exchange with pong and report it as JSON). Only the server side runs on
// fasthttp; the client towards pong stays net/http (see pingpong.NewTransport).
func NewPingHandler(cfg PingConfig) (fasthttp.RequestHandler, error) {
	h, err := newPing(cfg)
	if err != nil {
		return nil, err
	}
	return h.serve, nil
}

func newPing(cfg PingConfig) (*pingHandler, error) {
	base, err := pingpong.BaseURL(cfg.PongURL)
	if err != nil {
		return nil, fmt.Errorf("pong URL: %w", err)
	}
	if err := pingpong.Check("retries", cfg.Retries); err != nil {
		return nil, fmt.Errorf("retries %w", err)
	}
	timeout := cfg.Timeout
	timeout = cmp.Or(timeout, pingpong.DefaultTimeout)
	if err := pingpong.CheckTimeout(timeout); err != nil {
		return nil, fmt.Errorf("timeout %w", err)
	}
	h := &pingHandler{base: base + "/pong/", pongBase: base, answers: cfg.Answers, retries: cfg.Retries, timeout: timeout}
	h.bufs.New = func() any { b := make([]byte, relayBuffer); return &b }
	rt := pingpong.NewTransport(h.timeout, 256)
	rt.DialContext = h.relay.Dial(rt.DialContext)
	h.rt = rt
	return h, nil
}

// serve routes like the original's /ping/{length:[0-9]+} and
// /mping/{length:[0-9]+}: any method, 404 for every other path, and the
// digits passed on to pong as they came (leading zeros, and sizes beyond
// int, which pong refuses, as well).
func (h *pingHandler) serve(ctx *fasthttp.RequestCtx) {
	if len(ctx.Request.Header.PeekBytes(hdrChunked)) > 0 {
		// A chunked request body (markChunked), as pong's loops answer
		// it (loop.request); one over 4 KiB has had fasthttp's 413.
		plainError(ctx, fasthttp.StatusNotImplemented, fasthttp.StatusMessage(fasthttp.StatusNotImplemented))
		ctx.SetConnectionClose()
		return
	}
	path := ctx.Path()
	if isTCPInfo(ctx) {
		h.tcpInfo(ctx)
		return
	}
	arg, ok := bytes.CutPrefix(path, prefixPing)
	measure := !ok
	if measure {
		arg, ok = bytes.CutPrefix(path, prefixMPing)
	}
	n, digits := parseSize(arg)
	if !ok || !digits {
		notFound(ctx)
		return
	}
	target := h.base + string(arg)
	if measure {
		h.mping(ctx, target, n)
	} else {
		h.ping(ctx, target, n)
	}
}

// get is one attempt: a GET with its own deadline, which also bounds reading
// the body. The caller must call cancel after it is done with the body.
//
// fasthttp's RequestCtx is no per-request context (it is only cancelled when
// the server shuts down, and it is reused once the handler returns while a
// relayed body may still be streaming), so attempts hang off Background and
// the handlers check for a shutdown between attempts.
func (h *pingHandler) get(target string) (*http.Response, context.CancelFunc, error) {
	actx, cancel := context.WithTimeout(context.Background(), h.timeout)
	req, err := http.NewRequestWithContext(actx, http.MethodGet, target, nil)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	resp, err := h.rt.RoundTrip(req)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

// shuttingDown answers a request that a server shutdown cut short; it is no
// measurement, so not the "gave up" answer either.
func shuttingDown(ctx *fasthttp.RequestCtx) {
	plainError(ctx, fasthttp.StatusServiceUnavailable, "ping is shutting down\n")
}

// ping relays pong's answer: its status and body, as text/plain;
// charset=utf-8 with a Content-Length, as the original's net/http sends
// a relayed pong body. Like the original, which reads pong's body whole
// before it answers, ping reads a body of up to relayBuffer bytes whole
// first: a failed attempt, a body cut short included, is retried, and the
// last failure answers 503. A larger body is streamed with the length
// pong announced (a 200 of unannounced length: the size asked for), so
// ping's memory stays bounded; a body cut short after its status line
// left drops the connection, so the client sees a broken response rather
// than a short one. A 200 whose body is not a whole pong body for n (see
// pingpong.LengthOK) is no pong answer: ping answers 502 when it knows before
// answering, and drops the connection when a streamed body ends wrong.
func (h *pingHandler) ping(ctx *fasthttp.RequestCtx, target string, n int) {
	for i := 0; i <= h.retries; i++ {
		if i > 0 && ctx.Err() != nil {
			shuttingDown(ctx)
			return
		}
		resp, cancel, err := h.get(target)
		if err != nil {
			continue
		}
		check := resp.StatusCode == http.StatusOK
		if check && resp.ContentLength >= 0 && (resp.ContentLength > math.MaxInt || !pingpong.LengthOK(n, int(resp.ContentLength))) {
			resp.Body.Close()
			cancel()
			wrongLength(ctx, resp.ContentLength, n)
			return
		}
		bp := h.bufs.Get().(*[]byte)
		got, whole, err := readUpTo(resp.Body, *bp)
		if err != nil {
			h.bufs.Put(bp)
			resp.Body.Close()
			cancel()
			continue // cut short or timed out: a failed attempt, as the original's
		}
		ctx.SetStatusCode(resp.StatusCode)
		ctx.Response.Header.SetContentTypeBytes(textPlain)
		if whole {
			resp.Body.Close()
			cancel()
			if check && !pingpong.LengthOK(n, got) {
				h.bufs.Put(bp)
				wrongLength(ctx, int64(got), n)
				return
			}
			// The pooled buffer goes back once fasthttp has written it.
			b := &bufferedBody{h: h, buf: bp}
			b.r.Reset((*bp)[:got])
			ctx.Response.SetBodyStream(b, got)
			return
		}
		// Larger than the buffer: stream the rest behind what was read.
		size := int(resp.ContentLength)
		if resp.ContentLength < 0 || int64(size) != resp.ContentLength {
			size = -1
		}
		r := &relayBody{h: h, head: bp, headLen: got, body: resp.Body, cancel: cancel, want: -1}
		if check && size < 0 {
			// Unannounced: a whole pong body for n beyond the buffer is n
			// bytes, checked at the end.
			if n < 4 {
				r.Close()
				wrongLength(ctx, int64(got), n)
				return
			}
			size, r.want = n, n
		}
		ctx.Response.SetBodyStream(r, size)
		return
	}
	plainError(ctx, fasthttp.StatusServiceUnavailable, "Service unavailable")
}

// wrongLength answers a pong body of the wrong length for n.
func wrongLength(ctx *fasthttp.RequestCtx, got int64, n int) {
	plainError(ctx, fasthttp.StatusBadGateway, fmt.Sprintf("pong answered %d bytes for %d\n", got, n))
}

// readUpTo reads r into buf until r ends (whole) or buf is full (not
// whole: more may follow). An error other than the end is returned.
func readUpTo(r io.Reader, buf []byte) (n int, whole bool, err error) {
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err == io.EOF {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	return n, false, nil
}

// bufferedBody is a pong body read whole into a pooled buffer, as ping's
// response stream: the buffer goes back to the pool once fasthttp has
// written it (Close).
type bufferedBody struct {
	h   *pingHandler
	buf *[]byte
	r   bytes.Reader
}

func (b *bufferedBody) Read(p []byte) (int, error)         { return b.r.Read(p) }
func (b *bufferedBody) WriteTo(w io.Writer) (int64, error) { return b.r.WriteTo(w) }

func (b *bufferedBody) Close() error {
	if b.buf != nil {
		b.h.bufs.Put(b.buf)
		b.buf = nil
	}
	return nil
}

// errWrongLength ends a relayed body of unannounced length that is no whole
// pong body.
var errWrongLength = errors.New("pong's body has the wrong length")

// relayBody is pong's response body as ping's response stream: first the
// headLen bytes already read into head (a pooled buffer), then the rest.
// Close (called by fasthttp once the response is written or dropped)
// closes pong's body, ends the attempt's context and returns head.
type relayBody struct {
	h       *pingHandler
	head    *[]byte
	headLen int
	headOff int
	body    io.ReadCloser
	cancel  context.CancelFunc
	want    int   // requested size whose body length to check at EOF; -1: none
	got     int64 // bytes read from body, after head
	// held is the body's last wanted byte, kept back until pong's body ends
	// there: with Content-Length want announced, the client would take a
	// body that runs on past it as whole once it had want bytes.
	held    byte
	holding bool
}

func (r *relayBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.headOff < r.headLen {
		end := r.headLen
		if r.want >= 0 && end >= r.want {
			// What was read ahead is a whole body already, or more: the
			// last wanted byte waits for what pong sends after it.
			end = r.want - 1
		}
		if r.headOff < end {
			m := copy(p, (*r.head)[r.headOff:end])
			r.headOff += m
			return m, nil
		}
		if r.headLen > r.want {
			return 0, errWrongLength
		}
		r.held, r.holding, r.headOff = (*r.head)[r.want-1], true, r.headLen
	}
	m, err := r.body.Read(p)
	if r.want < 0 {
		return m, err
	}
	if r.holding {
		switch {
		case m > 0: // more than a whole body: the client never gets its last byte
			return 0, errWrongLength
		case err == io.EOF:
			r.holding = false
			p[0] = r.held
			return 1, io.EOF
		}
		return 0, err
	}
	r.got += int64(m)
	total := r.got + int64(r.headLen)
	switch want := int64(r.want); {
	case total > want:
		// Relay no byte past want-1, so the response stays short of its
		// announced length and the client sees it broken.
		return max(0, m-int(total-want)-1), errWrongLength
	case total == want && err == nil && m > 0:
		r.held, r.holding = p[m-1], true
		return m - 1, nil
	case err == io.EOF && !pingpong.LengthOK(r.want, int(min(total, math.MaxInt))):
		return m, errWrongLength
	}
	return m, err
}

// WriteTo copies through a pooled 64 KiB buffer: without it the copy into
// the connection would fall back to io.Copy with a fresh 32 KiB buffer per
// response.
func (r *relayBody) WriteTo(w io.Writer) (int64, error) { return r.h.copyPooled(w, r) }

func (r *relayBody) Close() error {
	err := r.body.Close()
	r.cancel()
	if r.head != nil {
		r.h.bufs.Put(r.head)
		r.head = nil
	}
	return err
}

// copyPooled copies r to w through a pooled 64 KiB buffer: large reads cut
// the syscall count for multi-MiB bodies without keeping a body in memory.
func (h *pingHandler) copyPooled(w io.Writer, r io.Reader) (int64, error) {
	bp := h.bufs.Get().(*[]byte)
	defer h.bufs.Put(bp)
	buf := *bp
	var n int64
	for {
		m, err := r.Read(buf)
		if m > 0 {
			wm, werr := w.Write(buf[:m])
			n += int64(wm)
			if werr != nil {
				return n, werr
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// mping times the whole inner exchange, retries included, from before the
// first attempt to the last body byte, as the original ping does, and
// answers 200 with the original's JSON in every case, giving up included
// (code 503, length 0, retries = the retries made). Attempts that fail
// before pong's answer is read whole are retried; pong's answer is
// reported with its status, except that a 200 whose body is no whole pong
// body for n (see pingpong.LengthOK) is reported as code 502: a wrong length is not
// a good message.
func (h *pingHandler) mping(ctx *fasthttp.RequestCtx, target string, n int) {
	start := time.Now()
	res := pingpong.MPing{Code: http.StatusServiceUnavailable, Retries: h.retries}
	for i := 0; i <= h.retries; i++ {
		if i > 0 && ctx.Err() != nil {
			shuttingDown(ctx)
			return
		}
		resp, cancel, err := h.get(target)
		if err != nil {
			continue
		}
		got, err := h.copyPooled(io.Discard, resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			continue // a cut-off body counts as a failed attempt, like the original
		}
		code := resp.StatusCode
		if code == http.StatusOK && (got > math.MaxInt || !pingpong.LengthOK(n, int(got))) {
			code = http.StatusBadGateway
		}
		res = pingpong.MPing{Length: int(min(got, math.MaxInt)), Code: code, Retries: i}
		break
	}
	// Two divisions, as the original computes it, so the printed digits
	// have the same form.
	res.Duration = float64(time.Since(start).Nanoseconds()) / 1000.0 / 1000.0
	ctx.Response.Header.SetContentTypeBytes(textPlain)
	var buf [128]byte // SetBody copies it into the response's pooled buffer
	ctx.SetBody(appendMPing(buf[:0], res))
}

// appendMPing writes the JSON as the original's format string
// {"length": %v, "code": %v, "retries": %v, "duration": %v} does: the same
// key order and spacing, the duration as %v prints a float64 (shortest
// form, with an exponent below 1e-4 and from 1e6 on), without reflection.
func appendMPing(b []byte, m pingpong.MPing) []byte {
	b = append(b, `{"length": `...)
	b = strconv.AppendInt(b, int64(m.Length), 10)
	b = append(b, `, "code": `...)
	b = strconv.AppendInt(b, int64(m.Code), 10)
	b = append(b, `, "retries": `...)
	b = strconv.AppendInt(b, int64(m.Retries), 10)
	b = append(b, `, "duration": `...)
	b = strconv.AppendFloat(b, m.Duration, 'g', -1, 64)
	return append(b, '}')
}
