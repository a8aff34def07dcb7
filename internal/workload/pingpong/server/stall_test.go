package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// The scene of a server asked for TCP_INFO while it measures: ping (its
// accepts booked, as `cnperf serve ping` runs it) in front of pong on its
// event loops, stallIdle live connections to ping, and stallClients
// clients asking ping for one path without pause, each on its own
// connection. A new connection's GET /ping/100 is timed while the clients
// flood /ping/100 and while they ask for /tcpinfo: reading TCP_INFO must
// not slow the measurement of another client more than a flood of
// measurements does.
const (
	stallIdle    = 3000
	stallClients = 200
	// stallBudget bounds one phase's probing: a stalled server gives its
	// probes' median from fewer of them rather than a test that hangs.
	stallBudget = 15 * time.Second
)

// stallScene is ping and pong with idle live connections to ping.
type stallScene struct {
	addr string // ping's host:port
	idle []net.Conn
}

// newStallScene starts pong and ping and opens idle connections to ping,
// each having made one exchange (so ping accepted and booked it, and
// keeps it as a kept-alive connection); nil when the process may not
// open the descriptors it takes.
func newStallScene(tb testing.TB, idle, clients int) *stallScene {
	tb.Helper()
	// Both ends of every connection are in this process, ping's pool to
	// pong too (at most 256 connections).
	need := uint64(2*(idle+clients+256) + 256)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Skipf("open files limit: %v", err)
	}
	if lim.Cur < need && lim.Max >= need {
		lim.Cur = need
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			tb.Skipf("raising the open files limit to %d: %v", need, err)
		}
	}
	if lim.Cur < need {
		tb.Skipf("the scene needs %d open files, the limit is %d (ulimit -n)", need, lim.Cur)
	}
	pongURL := servePongOn(tb, newPong(1<<20, chunkSize))
	var answers tcpinfo.Book
	ping, err := NewPingHandler(PingConfig{PongURL: pongURL, Answers: &answers})
	if err != nil {
		tb.Fatal(err)
	}
	pingURL := serveWith(tb, "Serve", func(ctx context.Context, ln net.Listener) error { return Serve(ctx, answers.Listener(ln), ping) })
	s := &stallScene{addr: strings.TrimPrefix(pingURL, "http://")}
	tb.Cleanup(func() {
		for _, c := range s.idle {
			c.Close()
		}
	})
	var mu sync.Mutex
	errs := make(chan error, 64)
	var wg sync.WaitGroup
	per := (idle + 63) / 64
	for w := range 64 {
		n := min(per, idle-w*per)
		if n <= 0 {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
				if err == nil {
					mu.Lock()
					s.idle = append(s.idle, c)
					mu.Unlock()
					err = exchange(c, bufio.NewReader(c), "/ping/100", false)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatalf("opening %d idle connections: %v", idle, err)
	}
	return s
}

// exchange sends one GET of path on c and reads its 200 answer whole.
func exchange(c net.Conn, br *bufio.Reader, path string, closing bool) error {
	if err := c.SetDeadline(time.Now().Add(stallBudget)); err != nil {
		return err
	}
	req := "GET " + path + " HTTP/1.1\r\nHost: ping\r\n\r\n"
	if closing {
		req = "GET " + path + " HTTP/1.1\r\nHost: ping\r\nConnection: close\r\n\r\n"
	}
	if _, err := io.WriteString(c, req); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return err
}

// load has clients ask path of ping without pause, each on its own
// connection, until the returned stop is called; load returns once every
// client has had an answer.
func (s *stallScene) load(tb testing.TB, clients int, path string) (stop func()) {
	tb.Helper()
	done := make(chan struct{})
	var started, wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		started.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			defer func() {
				if first {
					started.Done()
				}
			}()
			c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := exchange(c, br, path, false); err != nil {
					select {
					case <-done: // cut short by the stop
					default:
						errs <- err
					}
					return
				}
				if first {
					first = false
					started.Done()
				}
			}
		}()
	}
	started.Wait()
	return func() {
		close(done)
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			tb.Errorf("a client asking %s: %v", path, err)
		}
	}
}

// probe times new connections' GET /ping/100, dial to last byte, and
// returns their median: n of them, or those made within stallBudget (one
// that has no answer within it counts as taking that long).
func (s *stallScene) probe(tb testing.TB, n int) time.Duration {
	tb.Helper()
	var took []time.Duration
	end := time.Now().Add(stallBudget)
	for len(took) < n && (len(took) < 3 || time.Now().Before(end)) {
		t0 := time.Now()
		c, err := net.DialTimeout("tcp", s.addr, stallBudget)
		if err != nil {
			tb.Fatalf("probe: %v", err)
		}
		err = exchange(c, bufio.NewReader(c), "/ping/100", true)
		c.Close()
		var timeout net.Error
		if err != nil && !(errors.As(err, &timeout) && timeout.Timeout()) {
			tb.Fatalf("probe: %v", err)
		}
		took = append(took, time.Since(t0)) // stallBudget or more when it timed out
	}
	slices.Sort(took)
	return took[len(took)/2]
}

// stall measures the probes' median under a /ping/100 flood and under
// /tcpinfo requests of as many clients.
func (s *stallScene) stall(tb testing.TB, clients, probes int) (flood, info time.Duration) {
	tb.Helper()
	stop := s.load(tb, clients, "/ping/100")
	flood = s.probe(tb, probes)
	stop()
	stop = s.load(tb, clients, TCPInfoPath)
	info = s.probe(tb, probes)
	stop()
	return flood, info
}

// TestTCPInfoDoesNotStallPing: with 3,000 live connections and 200
// clients asking for /tcpinfo, a new connection's /ping/100 takes about
// what it takes under a /ping/100 flood of 200 clients. The bound is
// generous (five times, or 100 ms over), for a shared machine: a server
// that reads TCP_INFO under the lock its accepts take, or on pong's event
// loops, took seconds.
func TestTCPInfoDoesNotStallPing(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 3,000 connections and floods them")
	}
	s := newStallScene(t, stallIdle, stallClients)
	flood, info := s.stall(t, stallClients, 25)
	t.Logf("a new connection's GET /ping/100, median: %v under a /ping/100 flood, %v under /tcpinfo requests (%d live connections, %d clients)",
		flood, info, stallIdle, stallClients)
	if info > 5*flood+100*time.Millisecond {
		t.Errorf("/tcpinfo requests slowed a new connection's /ping/100 to %v, %.0f× its %v under a /ping flood",
			info, float64(info)/float64(flood), flood)
	}
}

// BenchmarkTCPInfoStall reports the medians of TestTCPInfoDoesNotStallPing's
// probes, b.N of them in each phase (-benchtime=25x), and their ratio.
func BenchmarkTCPInfoStall(b *testing.B) {
	s := newStallScene(b, stallIdle, stallClients)
	b.ResetTimer()
	flood, info := s.stall(b, stallClients, max(b.N, 3))
	b.ReportMetric(float64(flood)/float64(time.Millisecond), "flood-p50-ms")
	b.ReportMetric(float64(info)/float64(time.Millisecond), "tcpinfo-p50-ms")
	b.ReportMetric(float64(info)/float64(flood), "ratio")
}
