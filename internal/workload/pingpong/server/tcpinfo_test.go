package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// TestTCPInfoSides: after requests through ping to pong (on its event
// loops), ping's TCPInfoPath reports every side: ping's connections from
// the client, ping's to pong and pong's own from ping, their sums growing
// by what happened in between; a pong without ping answers its side alone.
func TestTCPInfoSides(t *testing.T) {
	pongURL := servePongOn(t, newPong(1<<20, chunkSize))
	var answers tcpinfo.Book
	ping, err := NewPingHandler(PingConfig{PongURL: pongURL, Answers: &answers})
	if err != nil {
		t.Fatal(err)
	}
	pingURL := serveWith(t, "Serve", func(ctx context.Context, ln net.Listener) error { return Serve(ctx, answers.Listener(ln), ping) })
	ask := func(base string) TCPInfo {
		t.Helper()
		resp, err := http.Get(base + TCPInfoPath)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET %s%s: %s %s", base, TCPInfoPath, resp.Status, resp.Header.Get("Content-Type"))
		}
		info, err := ReadTCPInfo(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	before := ask(pingURL)
	if before.Ping == nil || before.Relay == nil || before.Pong == nil {
		t.Fatalf("ping answered %+v, want every side", before)
	}
	for range 5 {
		resp, err := http.Get(pingURL + "/ping/100000")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != 100000 {
			t.Fatalf("relayed %d bytes, %v", n, err)
		}
		resp.Body.Close()
	}
	after := ask(pingURL)
	for _, s := range []struct {
		side     string
		was, now *tcpinfo.Snapshot
	}{{"ping", before.Ping, after.Ping}, {"relay", before.Relay, after.Relay}, {"pong", before.Pong, after.Pong}} {
		w := tcpinfo.Window(*s.was, *s.now)
		if w == nil || w.Connections < 1 || w.RTTUS <= 0 || w.Cwnd <= 0 {
			t.Errorf("side %s: window %+v, want at least one connection with an RTT and a window", s.side, w)
		}
	}
	alone := ask(pongURL)
	if alone.Pong == nil || alone.Ping != nil || alone.Relay != nil {
		t.Errorf("pong answered %+v, want its side alone", alone)
	}
	// Only GET: a POST to the path is ping's 404, as for any other path.
	resp, err := http.Post(pingURL+TCPInfoPath, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST %s: %s, want 404", TCPInfoPath, resp.Status)
	}
}

// TestReadTCPInfoBounded: an answer is read up to MaxTCPInfoBytes, so a
// server that is not cnperf's cannot make siege read without end.
func TestReadTCPInfoBounded(t *testing.T) {
	long := `{"ping":{"closed":{"n":1}},"x":"` + strings.Repeat("a", 2*MaxTCPInfoBytes) + `"}`
	if _, err := ReadTCPInfo(strings.NewReader(long)); err == nil {
		t.Fatal("an answer over the bound was read whole")
	}
	info, err := ReadTCPInfo(strings.NewReader(`{"pong":{"closed":{"n":3,"retrans":2},"live":{"n":1}}}`))
	if err != nil || info.Pong == nil || info.Pong.Closed.N != 3 || info.Pong.Live.N != 1 {
		t.Fatalf("ReadTCPInfo = %+v, %v", info, err)
	}
}
