// Package siege is ping-pong's client, as ppbench drives Kratzke's HTTP
// ping-pong (github.com/nkratzke/pingpong): it sends GET /mping/{size} to
// ping for every size of a plan, with a number of requests in flight, and
// hands each answer on as a record.Sample, the per-request record runs
// store. `cnperf siege` is its command (Command).
package siege

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/pingpong/server"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// Config tells siege which ping to load and how.
type Config struct {
	Target      string        // base URL of ping, e.g. http://198.18.0.2:8080
	Concurrency int           // parallel workers; 0 means 1; within pingpong.Bound("concurrency")
	Timeout     time.Duration // per request; 0 means pingpong.DefaultTimeout; at most pingpong.MaxTimeout
	// TCP, if not nil, is given at the end what TCP_INFO said of siege's
	// connections to ping (nil if none was read).
	TCP func(*tcpinfo.Stats)
	// Servers, if not nil, is given at the end what TCP_INFO said of the
	// servers' connections during the run, by side (ServerSides), from
	// ping's answers at server.TCPInfoPath before and after; nil where
	// ping does not answer it (the original ppbench servers).
	Servers func(map[string]*tcpinfo.Stats)
}

// The servers' sides of ping-pong's connections, each named by the server
// that sends on it the bulk of the bytes or the requests: ping's
// connections from siege (ping sends the answers), ping's connections to
// pong (ping sends the requests) and pong's from ping (pong sends the
// bodies).
const (
	SidePing  = "ping"
	SideRelay = "ping_to_pong"
	SidePong  = "pong"
)

// maxMPingBody bounds what siege reads from ping: an /mping answer is tens of
// bytes, anything larger is not ping.
const maxMPingBody = 64 << 10

// Run sends GET Target/mping/{size} for every request, with Concurrency
// workers taking requests from one queue in plan order, and hands each
// result to emit. emit is never called concurrently. Failed requests are
// emitted with Error set; siege keeps going. If ctx is cancelled, Run
// stops taking requests, drops those the cancellation cut short, and
// returns ctx.Err(); otherwise it returns nil once every request was tried.
func Run(ctx context.Context, cfg Config, reqs []pingpong.Request, emit func(record.Sample)) error {
	return run(ctx, cfg, len(reqs), func(i int) pingpong.Request { return reqs[i] }, emit)
}

// RunPlan is Run over Requests(sizes, reps) without building that list:
// memory stays O(len(sizes)) for any number of repetitions.
func RunPlan(ctx context.Context, cfg Config, sizes []int, reps int, emit func(record.Sample)) error {
	if reps < 1 || reps > pingpong.MaxRepetitions || len(sizes) > pingpong.MaxPlanSizes {
		return fmt.Errorf("siege plan of %d sizes × %d repetitions: want 1..%d repetitions of at most %d sizes", len(sizes), reps, pingpong.MaxRepetitions, pingpong.MaxPlanSizes)
	}
	return run(ctx, cfg, len(sizes)*reps, func(i int) pingpong.Request { return pingpong.Request{Size: sizes[i/reps], Rep: i % reps} }, emit)
}

func run(ctx context.Context, cfg Config, total int, at func(int) pingpong.Request, emit func(record.Sample)) error {
	base, err := pingpong.BaseURL(cfg.Target)
	if err != nil {
		return fmt.Errorf("siege target: %w", err)
	}
	base += "/mping/"
	workers := cfg.Concurrency
	workers = cmp.Or(workers, 1)
	if err := pingpong.Check("concurrency", workers); err != nil {
		return fmt.Errorf("siege concurrency %w", err)
	}
	workers = min(workers, max(1, total))
	timeout := cfg.Timeout
	timeout = cmp.Or(timeout, pingpong.DefaultTimeout)
	if err := pingpong.CheckTimeout(timeout); err != nil {
		return fmt.Errorf("siege timeout %w", err)
	}
	tr := pingpong.NewTransport(timeout, workers)
	defer tr.CloseIdleConnections()
	var conns tcpinfo.Book // siege's connections to ping, each read as it closes
	if cfg.TCP != nil {
		tr.DialContext = conns.Dial(tr.DialContext)
	}
	client := &http.Client{Transport: tr}
	var before server.TCPInfo
	askServers := cfg.Servers != nil
	if askServers {
		before, askServers = serverTCP(ctx, cfg.Target, timeout)
	}

	var (
		mu      sync.Mutex // guards next, dropped and calls to emit
		next    int
		dropped bool // a request was cut short by cancellation
		wg      sync.WaitGroup
	)
	take := func() (pingpong.Request, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= total || ctx.Err() != nil {
			return pingpong.Request{}, false
		}
		r := at(next)
		next++
		return r, true
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				req, ok := take()
				if !ok {
					return
				}
				s := one(ctx, client, base, timeout, req)
				mu.Lock()
				if ctx.Err() != nil && s.Error != "" {
					dropped = true // cut short by cancellation: not a measurement
					mu.Unlock()
					return
				}
				emit(s)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if cfg.TCP != nil {
		tr.CloseIdleConnections() // each reads its TCP_INFO as it closes
		cfg.TCP(conns.Closed())
	}
	if askServers {
		if after, ok := serverTCP(context.WithoutCancel(ctx), cfg.Target, timeout); ok {
			cfg.Servers(serverWindows(before, after))
		}
	}
	// A cancellation that came after the last request completed lost nothing.
	if err := ctx.Err(); err != nil && (next < total || dropped) {
		return err
	}
	return nil
}

// one performs one /mping request and turns the outcome into a Sample.
// Ping's answer is read whatever its HTTP status (the original answers 200
// even when it gave up; cnperf's ping up to 0.1 answered 503 then). A 200
// exchange whose length is no whole pong body for the size is an error: a
// wrong length is not a good message, whichever ping reported it.
func one(ctx context.Context, client *http.Client, base string, timeout time.Duration, req pingpong.Request) record.Sample {
	s := record.Sample{Workload: Name, Size: req.Size, Rep: req.Rep}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(rctx, http.MethodGet, base+strconv.Itoa(req.Size), nil)
	if err != nil {
		s.Error = pingpong.OneLine(err.Error())
		return s
	}
	s.Time = time.Now()
	resp, err := client.Do(hreq)
	if err != nil {
		s.LatencyMS = msSince(s.Time)
		s.Error = pingpong.OneLine(err.Error())
		return s
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMPingBody))
	resp.Body.Close()
	s.LatencyMS = msSince(s.Time)
	if err != nil {
		s.Error = pingpong.OneLine("reading /mping answer: " + err.Error())
		return s
	}
	m, err := pingpong.ParseMPing(body)
	if err != nil {
		s.Error = pingpong.OneLine(fmt.Sprintf("ping answered HTTP %d with no /mping answer (%v): %.80q", resp.StatusCode, err, body))
		return s
	}
	s.DurationMS, s.Length, s.Code, s.Retries = m.Duration, m.Length, m.Code, m.Retries
	if m.Code == http.StatusOK && !pingpong.LengthOK(req.Size, m.Length) {
		s.Error = fmt.Sprintf("ping reported code 200 with a %d-byte body for size %d", m.Length, req.Size)
	}
	return s
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

// serverTCP asks ping for its TCP_INFO sums (server.TCPInfoPath) on a
// connection of its own, so that siege's booked connections stay its
// requests'; false if ping does not answer it.
func serverTCP(ctx context.Context, target string, timeout time.Duration) (server.TCPInfo, bool) {
	base, err := pingpong.BaseURL(target)
	if err != nil {
		return server.TCPInfo{}, false
	}
	tr := pingpong.NewTransport(timeout, 1)
	defer tr.CloseIdleConnections()
	return server.FetchTCPInfo(ctx, tr, base, timeout)
}

// serverWindows is what each side did between two answers; nil without
// any.
func serverWindows(before, after server.TCPInfo) map[string]*tcpinfo.Stats {
	out := map[string]*tcpinfo.Stats{}
	for _, s := range []struct {
		side     string
		was, now *tcpinfo.Snapshot
	}{{SidePing, before.Ping, after.Ping}, {SideRelay, before.Relay, after.Relay}, {SidePong, before.Pong, after.Pong}} {
		if s.was == nil || s.now == nil {
			continue
		}
		if w := tcpinfo.Window(*s.was, *s.now); w != nil {
			out[s.side] = w
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
