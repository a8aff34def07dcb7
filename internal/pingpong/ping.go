package pingpong

import (
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
// the exchange with pong and report it as JSON).
func NewPingHandler(cfg PingConfig) (http.Handler, error) {
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

func (h *pingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var measure bool
	arg, ok := strings.CutPrefix(r.URL.Path, "/ping/")
	if !ok {
		arg, ok = strings.CutPrefix(r.URL.Path, "/mping/")
		measure = true
	}
	if !ok || strings.IndexByte(arg, '/') >= 0 {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header()["Allow"] = allowGet
		plainError(w, http.StatusMethodNotAllowed, "method not allowed: use GET or HEAD")
		return
	}
	n, msg := parseSize(arg, math.MaxInt)
	if msg != "" {
		plainError(w, http.StatusBadRequest, msg)
		return
	}
	target := h.base + strconv.Itoa(n)
	if measure {
		h.mping(w, r, target)
	} else {
		h.ping(w, r, target)
	}
}

// get is one attempt: a GET with its own deadline. The caller must call
// cancel after it is done with the body.
func (h *pingHandler) get(ctx context.Context, target string) (*http.Response, context.CancelFunc, error) {
	actx, cancel := context.WithTimeout(ctx, h.timeout)
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

// ping relays pong's answer. Only failures before pong answers are retried:
// once the status line is relayed, a broken body aborts the connection so the
// client sees a truncated response rather than a silently short one.
func (h *pingHandler) ping(w http.ResponseWriter, r *http.Request, target string) {
	for i := 0; i <= h.retries; i++ {
		resp, cancel, err := h.get(r.Context(), target)
		if err != nil {
			if r.Context().Err() != nil {
				return // our client left; nobody to answer
			}
			continue
		}
		hdr := w.Header()
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			hdr.Set("Content-Type", ct)
		}
		if resp.ContentLength >= 0 {
			hdr.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
		}
		w.WriteHeader(resp.StatusCode)
		_, err = io.Copy(w, resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		return
	}
	plainError(w, http.StatusServiceUnavailable, "pong server is not answering")
}

// bufPool holds read buffers for draining pong bodies: large reads cut the
// syscall count for multi-MiB bodies without keeping a body in memory.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// drain reads r to EOF and returns the byte count.
func drain(r io.Reader) (int64, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
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
func (h *pingHandler) mping(w http.ResponseWriter, r *http.Request, target string) {
	start := time.Now()
	res := MPing{Code: http.StatusServiceUnavailable, Retries: h.retries}
	status := http.StatusServiceUnavailable
	for i := 0; i <= h.retries; i++ {
		resp, cancel, err := h.get(r.Context(), target)
		if err != nil {
			if r.Context().Err() != nil {
				return
			}
			continue
		}
		n, err := drain(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			if r.Context().Err() != nil {
				return
			}
			continue // a cut-off body counts as a failed attempt, like the original
		}
		res = MPing{Length: int(n), Code: resp.StatusCode, Retries: i}
		status = http.StatusOK
		break
	}
	res.Duration = float64(time.Since(start).Nanoseconds()) / 1e6
	body := appendMPing(make([]byte, 0, 96), res)
	hdr := w.Header()
	hdr["Content-Type"] = appJSON
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

var appJSON = []string{"application/json"}

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
