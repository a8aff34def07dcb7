package server

import (
	"bytes"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"

	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"

	"github.com/valyala/fasthttp"
)

// chunkSize is the prepared buffer every body streams from: bodies up
// to this size leave in one write after the first byte, larger ones in
// chunks of it.
const chunkSize = 1 << 20

// Shared, never-mutated header values and path prefixes.
var (
	// textPlain is what the original's net/http sniffs for every body it
	// sends: pong bodies, /mping JSON, and its 404 and 503 texts.
	textPlain   = []byte("text/plain; charset=utf-8")
	hdrNosniff  = []byte("X-Content-Type-Options")
	nosniff     = []byte("nosniff")
	prefixPong  = []byte("/pong/")
	prefixPing  = []byte("/ping/")
	prefixMPing = []byte("/mping/")
	bodyPong    = []byte("pong")
)

type pongHandler struct {
	max int
	// file holds buf too (a memfd), for bodies sent with sendfile; -1
	// when there is none. sendfiles counts the bodies sent so.
	file      int
	sendfiles atomic.Int64
	// buf is "o"×(len-2) + "ng": a body of n >= 5 bytes is "p", then
	// chunks of buf's o's, then buf's last bytes up to and including
	// "ng". Its size is fixed whatever max is.
	buf  []byte
	pool sync.Pool // of *pongBody
	// book holds the connections the loops accepted, for TCPInfoPath.
	book tcpinfo.Book
}

// NewPongHandler serves GET /pong/{n} as the original pong does, for n up
// to maxSize (which must be in 0..MaxSizeLimit; see pingpong.CheckMaxSize). Every
// body streams from one buffer prepared here, so a request costs no body
// construction and no allocation, only copying, and memory stays the same
// for any n.
func NewPongHandler(maxSize int) fasthttp.RequestHandler {
	return newPong(maxSize, chunkSize).serve
}

// newPong prepares a pong whose buffer holds size bytes (at least 3).
func newPong(maxSize, size int) *pongHandler {
	maxSize = min(max(maxSize, 0), pingpong.MaxSizeLimit)
	buf := bytes.Repeat([]byte{'o'}, max(size, 3))
	buf[len(buf)-2], buf[len(buf)-1] = 'n', 'g'
	h := &pongHandler{max: maxSize, buf: buf, file: bodyFile(buf)}
	h.pool.New = func() any {
		b := &pongBody{h: h}
		b.sendFn = b.sendChunks
		return b
	}
	return h
}

// pongBody streams one body of n >= 5 bytes. The "p" joins the headers in
// fasthttp's buffered writer and the rest follows in as few writes as the
// buffer allows (one up to its size), so a body leaves with no small
// trailing segment. fasthttp calls Close once the response is written or
// dropped, which returns the body to the pool.
type pongBody struct {
	h    *pongHandler
	n    int      // body length
	off  int      // bytes already produced
	conn net.Conn // the client's, for sendfile

	sendFn  func(fd uintptr) bool // b.sendChunks
	sendErr error
}

// segment returns bytes of the body from off on: "p" at 0; then o's from
// the buffer while more than the buffer is left; then the buffer's tail,
// which ends in "ng".
func (b *pongBody) segment() []byte {
	if b.off == 0 {
		return bodyPong[:1] // "p"
	}
	buf := b.h.buf
	if left := b.n - b.off; left <= len(buf) {
		return buf[len(buf)-left:]
	}
	return buf[:len(buf)-2]
}

func (b *pongBody) Read(p []byte) (int, error) {
	if b.off >= b.n {
		return 0, io.EOF
	}
	m := copy(p, b.segment())
	b.off += m
	return m, nil
}

func (b *pongBody) WriteTo(w io.Writer) (int64, error) {
	if n, ok, err := b.sendfile(w); ok {
		return n, err
	}
	var total int64
	for b.off < b.n {
		m, err := w.Write(b.segment())
		b.off += m
		total += int64(m)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (b *pongBody) Close() error {
	b.n, b.off, b.conn = 0, 0, nil
	b.h.pool.Put(b)
	return nil
}

// serve answers like the original's route /pong/{length:[0-9]+}: any
// method; 404 unless the path is /pong/ and decimal digits; the body for a
// size up to the limit; above it (or beyond int), no answer at all, as the
// original's handler panics on a size it cannot parse: the connection is
// closed, so any ping, the original too, counts a failed attempt rather
// than relaying an error text as a good message.
func (h *pongHandler) serve(ctx *fasthttp.RequestCtx) {
	if isTCPInfo(ctx) {
		s := h.book.Snapshot()
		answerTCPInfo(ctx, TCPInfo{Pong: &s})
		return
	}
	arg, ok := bytes.CutPrefix(ctx.Path(), prefixPong)
	n, digits := parseSize(arg)
	if !ok || !digits {
		notFound(ctx)
		return
	}
	if n > h.max {
		dropConn(ctx)
		return
	}
	ctx.Response.Header.SetContentTypeBytes(textPlain)
	if n <= 4 {
		ctx.Response.SetBodyRaw(bodyPong)
		// Explicit, so a HEAD answer carries "Content-Length: 4" too.
		ctx.Response.Header.SetContentLength(len(bodyPong))
		return
	}
	// Content-Length n; for HEAD fasthttp skips the body and still closes it.
	b := h.pool.Get().(*pongBody)
	b.n = n
	b.conn = ctx.Conn()
	ctx.Response.SetBodyStream(b, n)
}

// dropConn closes the connection without an answer.
func dropConn(ctx *fasthttp.RequestCtx) {
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(net.Conn) {}) // fasthttp closes the connection afterwards
}

// parseSize reads what the original's route accepts, [0-9]+ (leading zeros
// too), without overflowing: ok is false for anything else, and a value
// beyond math.MaxInt comes back as math.MaxInt.
func parseSize(s []byte) (n int, ok bool) {
	if len(s) == 0 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int(c - '0')
		if n > (math.MaxInt-d)/10 {
			n = math.MaxInt // saturate; keep checking the rest are digits
			continue
		}
		n = n*10 + d
	}
	return n, true
}

// plainError answers code with a one-line text, as the original writes
// its own (no trailing newline unless msg has one).
func plainError(ctx *fasthttp.RequestCtx, code int, msg string) {
	ctx.SetStatusCode(code)
	ctx.Response.Header.SetContentTypeBytes(textPlain)
	ctx.Response.SetBodyString(msg)
}

// notFound answers like net/http's NotFound, the original's router's
// answer to every path it does not route.
func notFound(ctx *fasthttp.RequestCtx) {
	plainError(ctx, fasthttp.StatusNotFound, "404 page not found\n")
	ctx.Response.Header.SetBytesKV(hdrNosniff, nosniff)
}
