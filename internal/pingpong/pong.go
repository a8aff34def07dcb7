package pingpong

import (
	"bytes"
	"io"
	"strconv"
	"sync"

	"github.com/valyala/fasthttp"
)

// DefaultMaxSize is the largest body pong serves unless told otherwise.
const DefaultMaxSize = 16 << 20

// Shared, never-mutated header values and path prefixes.
var (
	textPlain   = []byte("text/plain")
	appJSON     = []byte("application/json")
	hdrAllow    = []byte("Allow")
	allowGet    = []byte("GET, HEAD")
	hdrNosniff  = []byte("X-Content-Type-Options")
	nosniff     = []byte("nosniff")
	prefixPong  = []byte("/pong/")
	prefixPing  = []byte("/ping/")
	prefixMPing = []byte("/mping/")
	bodyPNG     = []byte("png")
	bodyNG      = []byte("ng")
)

// Body returns the pong body of n bytes: "p", n-3 "o", "ng"; for n < 3 the
// first n bytes of "png". It is the reference the handler must match.
func Body(n int) []byte {
	if n <= 0 {
		return []byte{}
	}
	if n < 3 {
		return []byte("png"[:n])
	}
	b := make([]byte, n)
	b[0] = 'p'
	for i := 1; i < n-2; i++ {
		b[i] = 'o'
	}
	b[n-2], b[n-1] = 'n', 'g'
	return b
}

type pongHandler struct {
	max int
	// tail is "o"×(max-3) + "ng": every body of n >= 3 bytes is "p"
	// followed by tail's last n-1 bytes, one contiguous slice.
	tail []byte
	pool sync.Pool // of *pongBody
}

// NewPongHandler serves GET /pong/{n}. Every body is cut from one buffer
// prepared here and streamed to the connection from it, so a request costs
// no body construction and no allocation, only copying.
func NewPongHandler(maxSize int) fasthttp.RequestHandler {
	return newPong(maxSize).serve
}

func newPong(maxSize int) *pongHandler {
	if maxSize < 0 {
		maxSize = 0
	}
	tail := bytes.Repeat([]byte{'o'}, max(maxSize-1, 2))
	copy(tail[len(tail)-2:], bodyNG)
	h := &pongHandler{max: maxSize, tail: tail}
	h.pool.New = func() any { return &pongBody{h: h} }
	return h
}

// pongBody streams one body of n >= 3 bytes: "p", then the tail's last n-1
// bytes. The "p" joins the headers in fasthttp's buffered writer and the
// rest follows in one write, so a large body leaves in two sends with no
// small trailing segment (writing "ng" on its own cost a third, 2-byte
// segment per response). fasthttp calls Close once the response is written
// or dropped, which returns the body to the pool.
type pongBody struct {
	h   *pongHandler
	n   int // body length
	off int // bytes already produced
}

// segment returns the unproduced part of the body's current segment.
func (b *pongBody) segment() []byte {
	if b.off == 0 {
		return bodyPNG[:1] // "p"
	}
	return b.h.tail[len(b.h.tail)-(b.n-b.off):]
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
	b.n, b.off = 0, 0
	b.h.pool.Put(b)
	return nil
}

// requestedSize checks a GET or HEAD of PREFIX{n}, where arg is what
// follows the prefix (matched: the prefix was there), and returns n. On
// anything else it answers 404, 405 or 400 and returns false.
func requestedSize(ctx *fasthttp.RequestCtx, arg []byte, matched bool, max int) (int, bool) {
	if !matched || bytes.IndexByte(arg, '/') >= 0 {
		notFound(ctx)
		return 0, false
	}
	if !ctx.IsGet() && !ctx.IsHead() {
		methodNotAllowed(ctx)
		return 0, false
	}
	n, msg := parseSize(arg, max)
	if msg != "" {
		plainError(ctx, fasthttp.StatusBadRequest, msg)
		return 0, false
	}
	return n, true
}

func (h *pongHandler) serve(ctx *fasthttp.RequestCtx) {
	arg, ok := bytes.CutPrefix(ctx.Path(), prefixPong)
	n, ok := requestedSize(ctx, arg, ok, h.max)
	if !ok {
		return
	}
	ctx.Response.Header.SetContentTypeBytes(textPlain)
	if n < 3 {
		ctx.Response.SetBodyRaw(bodyPNG[:n])
		// Explicit, so a HEAD answer for 0 bytes carries "Content-Length: 0".
		ctx.Response.Header.SetContentLength(n)
		return
	}
	// Content-Length n; for HEAD fasthttp skips the body and still closes it.
	b := h.pool.Get().(*pongBody)
	b.n = n
	ctx.Response.SetBodyStream(b, n)
}

// parseSize accepts only plain decimal digits (no sign, no spaces) and
// rejects values above max without overflowing. It returns a one-line reason
// when the size is unacceptable.
func parseSize(s []byte, max int) (int, string) {
	if len(s) == 0 {
		return 0, "size missing: use /pong/{bytes}"
	}
	if s[0] == '-' && len(s) > 1 && allDigits(s[1:]) {
		return 0, "size must be >= 0"
	}
	if !allDigits(s) {
		return 0, "size must be a non-negative integer"
	}
	n := 0
	for i := 0; i < len(s); i++ {
		d := int(s[i] - '0')
		// n*10+d > max, phrased so that it cannot overflow even for max = MaxInt.
		if n > max/10 || n*10 > max-d {
			return 0, "size exceeds the maximum of " + strconv.Itoa(max) + " bytes"
		}
		n = n*10 + d
	}
	return n, ""
}

func allDigits(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// plainError answers code with a one-line reason, so log scrapers and curl
// users see it whole.
func plainError(ctx *fasthttp.RequestCtx, code int, msg string) {
	ctx.SetStatusCode(code)
	ctx.Response.Header.SetContentTypeBytes(textPlain)
	ctx.Response.Header.SetBytesKV(hdrNosniff, nosniff)
	ctx.Response.SetBodyString(msg)
	ctx.Response.AppendBodyString("\n")
}

// notFound answers like net/http's NotFound did.
func notFound(ctx *fasthttp.RequestCtx) {
	plainError(ctx, fasthttp.StatusNotFound, "404 page not found")
}

func methodNotAllowed(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetBytesKV(hdrAllow, allowGet)
	plainError(ctx, fasthttp.StatusMethodNotAllowed, "method not allowed: use GET or HEAD")
}
