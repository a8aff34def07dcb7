package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

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

// pongTCPInfo asks pong, through ping's pool (its connection is booked
// like every other), for its side; nil if pong does not say (the
// original pong answers 404).
func (h *pingHandler) pongTCPInfo() *tcpinfo.Snapshot {
	actx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, h.pongBase+TCPInfoPath, nil)
	if err != nil {
		return nil
	}
	resp, err := h.rt.RoundTrip(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxTCPInfoBytes))
		return nil
	}
	t, err := ReadTCPInfo(resp.Body)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxTCPInfoBytes))
	if err != nil {
		return nil
	}
	return t.Pong
}

// tcpInfo answers ping's TCPInfoPath.
func (h *pingHandler) tcpInfo(ctx *fasthttp.RequestCtx) {
	var t TCPInfo
	if h.answers != nil {
		s := h.answers.Snapshot()
		t.Ping = &s
	}
	relay := h.relay.Snapshot()
	t.Relay = &relay
	t.Pong = h.pongTCPInfo()
	answerTCPInfo(ctx, t)
}
