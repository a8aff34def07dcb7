package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/cnperf/cnperf/internal/workload/tcpinfo"

	"github.com/valyala/fasthttp"
)

// TCPInfoPath is where ping and pong answer what TCP_INFO says of their
// connections (a GET, any other path is theirs): pong of the connections
// it accepted (it sends the bodies on them), ping of those it accepted
// from siege (it sends the answers) and those it opened to pong (it sends
// the requests), with pong's own answer inside. Each side's sums run
// from the server's start; siege asks before and after a cell and keeps
// the difference (tcpinfo.Window), as the retransmits that matter for a
// large message are the sender's, and the senders of bodies are the
// servers. The original ppbench servers answer it 404, and siege then
// records none.
const TCPInfoPath = "/tcpinfo"

var pathTCPInfo = []byte(TCPInfoPath)

// isTCPInfo reports a request for TCPInfoPath.
func isTCPInfo(ctx *fasthttp.RequestCtx) bool {
	return ctx.IsGet() && bytes.Equal(ctx.Path(), pathTCPInfo)
}

// TCPInfo is the answer at TCPInfoPath; a side a server does not book is
// absent.
type TCPInfo struct {
	Ping  *tcpinfo.Snapshot `json:"ping,omitempty"`  // ping's connections from siege
	Relay *tcpinfo.Snapshot `json:"relay,omitempty"` // ping's connections to pong
	Pong  *tcpinfo.Snapshot `json:"pong,omitempty"`  // pong's connections from ping
}

// MaxTCPInfoBytes bounds an answer at TCPInfoPath as a reader takes it:
// three snapshots of a few numbers each.
const MaxTCPInfoBytes = 4 << 10

// ReadTCPInfo decodes an answer at TCPInfoPath from at most
// MaxTCPInfoBytes of r.
func ReadTCPInfo(r io.Reader) (TCPInfo, error) {
	var t TCPInfo
	dec := json.NewDecoder(io.LimitReader(r, MaxTCPInfoBytes))
	err := dec.Decode(&t)
	return t, err
}

// answerTCPInfo writes t as JSON.
func answerTCPInfo(ctx *fasthttp.RequestCtx, t TCPInfo) {
	b, err := json.Marshal(t)
	if err != nil {
		plainError(ctx, fasthttp.StatusInternalServerError, err.Error())
		return
	}
	ctx.Response.Header.SetContentType("application/json")
	ctx.Response.SetBody(b)
}

// FetchTCPInfo asks the server at base (a base URL) through rt for its
// answer at TCPInfoPath, within timeout; false if it does not say (the
// original servers answer 404). The body is read to its end, so that rt
// may reuse the connection.
func FetchTCPInfo(ctx context.Context, rt http.RoundTripper, base string, timeout time.Duration) (TCPInfo, bool) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, base+TCPInfoPath, nil)
	if err != nil {
		return TCPInfo{}, false
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return TCPInfo{}, false
	}
	defer resp.Body.Close()
	ok := resp.StatusCode == http.StatusOK
	var t TCPInfo
	if ok {
		t, err = ReadTCPInfo(resp.Body)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxTCPInfoBytes))
	return t, ok && err == nil
}

// tcpInfo answers ping's TCPInfoPath, with pong's side asked through
// ping's pool (its connection is booked like every other).
func (h *pingHandler) tcpInfo(ctx *fasthttp.RequestCtx) {
	var t TCPInfo
	if h.answers != nil {
		s := h.answers.Snapshot()
		t.Ping = &s
	}
	relay := h.relay.Snapshot()
	t.Relay = &relay
	if p, ok := FetchTCPInfo(context.Background(), h.rt, h.pongBase, h.timeout); ok {
		t.Pong = p.Pong
	}
	answerTCPInfo(ctx, t)
}
