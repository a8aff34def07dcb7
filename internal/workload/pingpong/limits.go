package pingpong

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The bounds, defaults and URL rules the servers (package server), siege
// and a spec share: apart from the servers, so that reading a spec or a
// run links no HTTP server.

// Ping's attempts towards pong.
const (
	// DefaultRetries is the original ping's count: it gives up after 100
	// attempts and then reports "retries": 100.
	DefaultRetries = 100
	// MaxRetries bounds --retries and a spec's retries.
	MaxRetries = 1000
	// DefaultTimeout bounds one attempt unless told otherwise (the
	// original has none: it waits for pong forever).
	DefaultTimeout = 60 * time.Second
	// MaxTimeout bounds ping's and siege's timeouts.
	MaxTimeout = time.Hour
)

// MPing is the /mping answer. The field set and meaning follow the original
// Go ping (length, code, retries, duration in ms) so ppbench can read it.
type MPing struct {
	Duration float64 `json:"duration"`
	Length   int     `json:"length"`
	Code     int     `json:"code"`
	Retries  int     `json:"retries"`
}

// BaseURL accepts http(s)://host[:port][/prefix] and returns it without
// a trailing slash, so paths can be appended by concatenation.
func BaseURL(raw string) (string, error) {
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

// NewTransport is the keep-alive client side shared by ping and siege:
// connection reuse so a measurement is one exchange, not a TCP handshake;
// no proxy from the environment (a benchmark must hit its target directly);
// no gzip so Length counts wire bytes of the body.
func NewTransport(timeout time.Duration, idlePerHost int) *http.Transport {
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

// Size limits. The original pong builds every body in memory and serves
// whatever fits (a size beyond int64 makes its handler panic, which drops
// the connection); cnperf streams bodies from one small prepared buffer, so
// its limit is a policy, not memory.
const (
	// MaxSizeLimit is the largest body pong may be configured to serve
	// (--max-size, a spec's max_body) and the largest size siege asks for:
	// 4 GiB, far above any size the papers used and above what the
	// original serves on a machine with less than about 12 GB of memory
	// (it grows its body by doubling).
	MaxSizeLimit = min(1<<32, math.MaxInt)
	// DefaultMaxSize is pong's limit unless told otherwise: every size
	// cnperf may be configured to serve.
	DefaultMaxSize = MaxSizeLimit
)

// LengthOK reports whether length is a whole pong body for a request of
// size bytes, by which ping, siege and stored samples (record.Sample.OK)
// judge a body. That is size, and 4 for size < 4 (the original Go pong
// answers any size below 4 with "pong"); below 4 bytes the original pongs
// disagree, so a size itself (cnperf's pong up to 0.1 answered "p", "pn",
// "png") and 3 (the Dart pong's "png") count as whole too.
func LengthOK(size, length int) bool {
	if size >= 4 {
		return length == size
	}
	return length == 4 || length == 3 || length == size
}

// rangeError is the one-line reason for a value outside lo..hi.
func rangeError(v, lo, hi int) error { return fmt.Errorf("%d: must be in %d..%d", v, lo, hi) }

// Default ports of the servers' --listen, as Kratzke's originals.
const (
	DefaultPongPort = 4040
	DefaultPingPort = 8080
)
