package pingpong

import (
	"io"
	"net/http"
	"strconv"
	"strings"
)

// DefaultMaxSize is the largest body pong serves unless told otherwise.
const DefaultMaxSize = 16 << 20

// Shared, never-mutated header values: assigning them directly to the header
// map skips key canonicalisation and a slice allocation per request.
var (
	textPlain = []string{"text/plain"}
	allowGet  = []string{"GET, HEAD"}
	nosniff   = []string{"nosniff"}
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
	// buf is "o"×(max-3) + "ng": every body of n >= 3 bytes is "p" followed
	// by the last n-1 bytes of buf.
	buf []byte
	// cl caches Content-Length values for small sizes (the common ones in a
	// plan), so those requests do not allocate a string and a slice.
	cl [][]string
	// file is buf's sendfile twin for bodies of at least sendfileMin bytes.
	file bodyFile
}

// sendfileMin is the body size from which pong uses sendfile: below it the
// extra syscalls (lseek, a separate header write) cost more than the copy
// they save. Chosen by measurement with bench/pong-vs-nginx.sh.
const sendfileMin = 32 << 10

// clCache bounds the Content-Length cache (built up front, read-only, so no
// locking): 4096 entries cost ~200 KiB.
const clCache = 1 << 12

// NewPongHandler serves GET /pong/{n}. Every body is cut from one buffer
// prepared here, so a request costs no body construction, only copying.
func NewPongHandler(maxSize int) http.Handler {
	if maxSize < 0 {
		maxSize = 0
	}
	// tail = "o"×(maxSize-3) + "ng" (at least "ng"). The body for n >= 3 is
	// "p" + tail[len(tail)-(n-1):], i.e. one 1-byte write followed by one
	// contiguous write, which lets net/http hand the bulk to the socket
	// without an extra flush for a trailing fragment.
	tl := maxSize - 1
	if tl < 2 {
		tl = 2
	}
	tail := make([]byte, tl)
	for i := range tail {
		tail[i] = 'o'
	}
	tail[tl-2], tail[tl-1] = 'n', 'g'
	h := &pongHandler{max: maxSize, buf: tail}
	h.file.tail = tail
	nc := min(maxSize+1, clCache)
	h.cl = make([][]string, nc)
	for i := range h.cl {
		h.cl[i] = []string{strconv.Itoa(i)}
	}
	return h
}

var (
	bodyP   = []byte("p")
	bodyPNG = []byte("png")
)

func (h *pongHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arg, ok := strings.CutPrefix(r.URL.Path, "/pong/")
	if !ok || strings.IndexByte(arg, '/') >= 0 {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header()["Allow"] = allowGet
		plainError(w, http.StatusMethodNotAllowed, "method not allowed: use GET or HEAD")
		return
	}
	n, msg := parseSize(arg, h.max)
	if msg != "" {
		plainError(w, http.StatusBadRequest, msg)
		return
	}

	hdr := w.Header()
	hdr["Content-Type"] = textPlain
	if n < len(h.cl) {
		hdr["Content-Length"] = h.cl[n]
	} else {
		hdr["Content-Length"] = []string{strconv.Itoa(n)}
	}
	if r.Method == http.MethodHead || n == 0 {
		w.WriteHeader(http.StatusOK)
		return
	}
	if n < 3 {
		w.Write(bodyPNG[:n])
		return
	}
	off := len(h.buf) - (n - 1)
	// Write errors mean the client went away; nothing useful to do.
	if n >= sendfileMin {
		// net/http's ResponseWriter hands an *os.File behind an
		// io.LimitedReader to sendfile(2) on the TCP connection.
		if rf, ok := w.(io.ReaderFrom); ok {
			if f := h.file.get(int64(off)); f != nil {
				w.Write(bodyP)
				// Flushing sends the header now; ReadFrom then skips its
				// 512-byte sniffing read and goes straight to sendfile.
				if fl, ok := w.(http.Flusher); ok {
					fl.Flush()
				}
				rf.ReadFrom(&io.LimitedReader{R: f, N: int64(n - 1)})
				h.file.put(f)
				return
			}
		}
	}
	w.Write(bodyP)
	w.Write(h.buf[off:])
}

// parseSize accepts only plain decimal digits (no sign, no spaces) and
// rejects values above max without overflowing. It returns a one-line reason
// when the size is unacceptable.
func parseSize(s string, max int) (int, string) {
	if s == "" {
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

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// plainError is http.Error without the per-call header churn; the reason is
// a single line so log scrapers and curl users see it whole.
func plainError(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h["Content-Type"] = textPlain
	h["X-Content-Type-Options"] = nosniff
	w.WriteHeader(code)
	w.Write([]byte(msg + "\n"))
}
