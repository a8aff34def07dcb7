package pingpong

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Defaults for PingConfig zero values.
const (
	DefaultRetries = 10
	DefaultTimeout = 60 * time.Second
)

// PingConfig tells the ping server where pong is and how hard to try.
type PingConfig struct {
	PongURL string        // base URL of pong, e.g. http://198.18.0.3:8080
	Retries int           // retries after the first failed attempt; 0 means DefaultRetries
	Timeout time.Duration // per attempt; 0 means DefaultTimeout
}

// MPing is the /mping answer. The field set and meaning follow the original
// Go ping (length, code, retries, duration in ms) so ppbench can read it.
type MPing struct {
	Duration float64 `json:"duration"`
	Length   int     `json:"length"`
	Code     int     `json:"code"`
	Retries  int     `json:"retries"`
}

type pingHandler struct {
	base    string // PongURL without trailing slash, + "/pong/"
	retries int
	timeout time.Duration
	rt      http.RoundTripper
}

// NewPingHandler serves /ping/{n} (relay pong's body) and /mping/{n} (time
// the exchange with pong and report it as JSON). Only the server side runs on
// fasthttp; the client towards pong stays net/http (see newTransport).
func NewPingHandler(cfg PingConfig) (fasthttp.RequestHandler, error) {
	h, err := newPing(cfg)
	if err != nil {
		return nil, err
	}
	return h.serve, nil
}

func newPing(cfg PingConfig) (*pingHandler, error) {
	base, err := checkBaseURL(cfg.PongURL)
	if err != nil {
		return nil, fmt.Errorf("pong URL: %w", err)
	}
	h := &pingHandler{base: base + "/pong/", retries: cfg.Retries, timeout: cfg.Timeout}
	if h.retries == 0 {
		h.retries = DefaultRetries
	} else if h.retries < 0 {
		h.retries = 0
	}
	if h.timeout <= 0 {
		h.timeout = DefaultTimeout
	}
	h.rt = newTransport(h.timeout, 256)
	return h, nil
}

// checkBaseURL accepts http(s)://host[:port][/prefix] and returns it without
// a trailing slash, so paths can be appended by concatenation.
func checkBaseURL(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q: no host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%q: must not carry user info, query or fragment", raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// newTransport is the keep-alive client side shared by ping and siege:
// connection reuse so a measurement is one exchange, not a TCP handshake;
// no proxy from the environment (a benchmark must hit its target directly);
// no gzip so Length counts wire bytes of the body.
func newTransport(timeout time.Duration, idlePerHost int) *http.Transport {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:               nil,
		DialContext:         d.DialContext,
		MaxIdleConns:        0, // no global cap; the per-host cap applies
		MaxIdleConnsPerHost: idlePerHost,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		// Default 4 KiB read buffers: reads of 64 KiB (drain) bypass them.
	}
}

func (h *pingHandler) serve(ctx *fasthttp.RequestCtx) {
	path := ctx.Path()
	arg, ok := bytes.CutPrefix(path, prefixPing)
	measure := !ok
	if measure {
		arg, ok = bytes.CutPrefix(path, prefixMPing)
	}
	n, ok := requestedSize(ctx, arg, ok, math.MaxInt)
	if !ok {
		return
	}
	target := h.base + strconv.Itoa(n)
	if measure {
		h.mping(ctx, target)
	} else {
		h.ping(ctx, target)
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
	plainError(ctx, fasthttp.StatusServiceUnavailable, "ping is shutting down")
}

// ping relays pong's answer. Only failures before pong answers are retried:
// once the status line is relayed, a broken body aborts the connection so the
// client sees a truncated response rather than a silently short one.
func (h *pingHandler) ping(ctx *fasthttp.RequestCtx, target string) {
	for i := 0; i <= h.retries; i++ {
		if i > 0 && ctx.Err() != nil {
			shuttingDown(ctx)
			return
		}
		resp, cancel, err := h.get(target)
		if err != nil {
			continue
		}
		ctx.SetStatusCode(resp.StatusCode)
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			ctx.Response.Header.SetContentType(ct)
		} else {
			ctx.Response.Header.SetNoDefaultContentType(true)
		}
		// fasthttp streams the body after the handler returns, with the
		// Content-Length pong announced (chunked if it announced none), and
		// closes the relay when done; a read error or short body makes it
		// drop the connection.
		size := int(resp.ContentLength)
		if resp.ContentLength < 0 || int64(size) != resp.ContentLength {
			size = -1
		}
		ctx.Response.SetBodyStream(&relayBody{body: resp.Body, cancel: cancel}, size)
		return
	}
	plainError(ctx, fasthttp.StatusServiceUnavailable, "pong server is not answering")
}

// relayBody is pong's response body as ping's response stream. Close (called
// by fasthttp once the response is written or dropped) closes pong's body and
// ends the attempt's context.
type relayBody struct {
	body   io.ReadCloser
	cancel context.CancelFunc
}

func (r *relayBody) Read(p []byte) (int, error) { return r.body.Read(p) }

// WriteTo copies through a pooled 64 KiB buffer: without it the copy into
// the connection would fall back to io.Copy with a fresh 32 KiB buffer per
// response.
func (r *relayBody) WriteTo(w io.Writer) (int64, error) { return copyPooled(w, r.body) }

func (r *relayBody) Close() error {
	err := r.body.Close()
	r.cancel()
	return err
}

// bufPool holds read buffers for draining pong bodies: large reads cut the
// syscall count for multi-MiB bodies without keeping a body in memory.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// drain reads r to EOF and returns the byte count.
func drain(r io.Reader) (int64, error) { return copyPooled(io.Discard, r) }

// copyPooled copies r to w through a pooled 64 KiB buffer.
func copyPooled(w io.Writer, r io.Reader) (int64, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
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
// first attempt to the last body byte, as the original ping does.
func (h *pingHandler) mping(ctx *fasthttp.RequestCtx, target string) {
	start := time.Now()
	res := MPing{Code: http.StatusServiceUnavailable, Retries: h.retries}
	status := http.StatusServiceUnavailable
	for i := 0; i <= h.retries; i++ {
		if i > 0 && ctx.Err() != nil {
			shuttingDown(ctx)
			return
		}
		resp, cancel, err := h.get(target)
		if err != nil {
			continue
		}
		n, err := drain(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			continue // a cut-off body counts as a failed attempt, like the original
		}
		res = MPing{Length: int(n), Code: resp.StatusCode, Retries: i}
		status = http.StatusOK
		break
	}
	res.Duration = float64(time.Since(start).Nanoseconds()) / 1e6
	ctx.SetStatusCode(status)
	ctx.Response.Header.SetContentTypeBytes(appJSON)
	var buf [128]byte // SetBody copies it into the response's pooled buffer
	ctx.SetBody(appendMPing(buf[:0], res))
}

// appendMPing writes the JSON in the original's key order and spacing
// ({"length": L, "code": C, "retries": R, "duration": D}), byte-compatible
// with scripts that scrape it, without reflection.
func appendMPing(b []byte, m MPing) []byte {
	b = append(b, `{"length": `...)
	b = strconv.AppendInt(b, int64(m.Length), 10)
	b = append(b, `, "code": `...)
	b = strconv.AppendInt(b, int64(m.Code), 10)
	b = append(b, `, "retries": `...)
	b = strconv.AppendInt(b, int64(m.Retries), 10)
	b = append(b, `, "duration": `...)
	b = strconv.AppendFloat(b, m.Duration, 'f', -1, 64)
	return append(b, '}')
}
