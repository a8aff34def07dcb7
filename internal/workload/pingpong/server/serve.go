package server

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// ShutdownGrace bounds how long Serve waits for in-flight requests after ctx
// is cancelled; an /mping towards a dead pong may otherwise hold it for
// Retries × Timeout.
const ShutdownGrace = 5 * time.Second

// Server limits. Ping and pong only take GETs, so a request is a header and
// nothing else; ReadTimeout covers reading all of it (no slowloris on a
// benchmark port), IdleTimeout keeps connections across siege pauses.
const (
	readTimeout        = 10 * time.Second
	idleTimeout        = 2 * time.Minute
	maxRequestBodySize = 4 << 10
	// maxConns bounds the connections served at once, and with them the
	// server's memory (a few tens of KiB each); one more is answered 503
	// and closed. siege's concurrency is within pingpong.Bound("concurrency").
	maxConns = 4096
)

// errListenerClosed reports a listener that stopped accepting although
// nobody asked Serve to stop (fasthttp returns nil for a closed listener).
var errListenerClosed = errors.New("listener closed")

// newServer is the fasthttp server ping runs on (pong's tests too), with
// its request head's timeout (readTimeout but in tests).
func newServer(h fasthttp.RequestHandler, headTimeout time.Duration) *fasthttp.Server {
	return &fasthttp.Server{
		Handler:               h,
		NoDefaultServerHeader: true,
		ReadTimeout:           headTimeout,
		IdleTimeout:           idleTimeout,
		MaxRequestBodySize:    maxRequestBodySize,
		Concurrency:           maxConns,
		CloseOnShutdown:       true, // "Connection: close" on answers during shutdown
		ErrorHandler:          badRequest,
		HeaderReceived:        markChunked,
	}
}

// hdrChunked marks a request that came with a chunked body: fasthttp
// reads such a body and then sets the request's Content-Length to what
// it read, so the handler could no longer tell (see pingHandler.serve).
var hdrChunked = []byte("X-Cnperf-Chunked-Body")

// markChunked notes, once the head is read, a chunked request body.
func markChunked(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if h.ContentLength() == -1 {
		h.SetBytesKV(hdrChunked, []byte("1"))
	}
	return fasthttp.RequestConfig{}
}

// badRequest answers a request fasthttp could not read as pong's event
// loops do (loop.reject), so that ping and pong answer the same bad
// request alike: 413 for a body over 4 KiB, 431 for a head over 4 KiB,
// 400 for the rest, each with its status text and the connection closed
// after it; a request whose head does not arrive within readTimeout gets
// no answer, the connection is closed.
func badRequest(ctx *fasthttp.RequestCtx, err error) {
	var timeout interface{ Timeout() bool } // net.Error's, and fasthttp's ErrTimeout
	var small *fasthttp.ErrSmallBuffer
	code := fasthttp.StatusBadRequest
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &timeout) && timeout.Timeout():
		// fasthttp writes the answer to the closed connection and gives up.
		ctx.Conn().Close()
		return
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		code = fasthttp.StatusRequestEntityTooLarge
	case errors.As(err, &small):
		code = fasthttp.StatusRequestHeaderFieldsTooLarge
	}
	ctx.Response.Reset()
	plainError(ctx, code, fasthttp.StatusMessage(code))
}

// conns tracks a server's open connections so Serve can drop the ones still
// busy when the shutdown grace expires (fasthttp leaves them running).
type conns struct {
	mu sync.Mutex
	m  map[net.Conn]struct{}
}

func (c *conns) track(nc net.Conn, st fasthttp.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case fasthttp.StateNew:
		if c.m == nil {
			c.m = make(map[net.Conn]struct{})
		}
		c.m[nc] = struct{}{}
	case fasthttp.StateClosed, fasthttp.StateHijacked:
		delete(c.m, nc)
	}
}

func (c *conns) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for nc := range c.m {
		nc.Close()
		delete(c.m, nc)
	}
}

// Serve runs h on ln until ctx is cancelled, then shuts down gracefully and
// returns nil. Any other end of serving is returned as an error.
func Serve(ctx context.Context, ln net.Listener, h fasthttp.RequestHandler) error {
	return serve(ctx, ln, h, readTimeout)
}

// serve is Serve with the request head's timeout as a parameter.
func serve(ctx context.Context, ln net.Listener, h fasthttp.RequestHandler, headTimeout time.Duration) error {
	srv := newServer(h, headTimeout)
	var open conns
	srv.ConnState = open.track
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if err == nil {
			err = errListenerClosed
		}
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.ShutdownWithContext(sctx); err != nil {
		open.closeAll() // grace expired: drop the stragglers
	}
	// ShutdownWithContext does nothing if srv.Serve has not registered ln
	// yet; closing ln ourselves ends srv.Serve in every case.
	ln.Close()
	if err := <-errc; err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
