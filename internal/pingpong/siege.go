package pingpong

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SiegeConfig tells siege which ping to load and how.
type SiegeConfig struct {
	Target      string        // base URL of ping, e.g. http://198.18.0.2:8080
	Concurrency int           // parallel workers; 0 means 1
	Timeout     time.Duration // per request; 0 means DefaultTimeout
	// Dial, when set, opens siege's connections (the runner's dials from
	// inside the siege host's network namespace); nil dials normally.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// maxMPingBody bounds what siege reads from ping: an /mping answer is tens of
// bytes, anything larger is not ping.
const maxMPingBody = 64 << 10

// Siege sends GET Target/mping/{size} for every request, with Concurrency
// workers taking requests from one queue in plan order, and hands each
// result to emit. emit is never called concurrently. Failed requests are
// emitted with Error set and Code 0; siege keeps going. If ctx is cancelled,
// Siege stops taking requests, drops those the cancellation cut short, and
// returns ctx.Err(); otherwise it returns nil once every request was tried.
func Siege(ctx context.Context, cfg SiegeConfig, reqs []Request, emit func(Sample)) error {
	base, err := checkBaseURL(cfg.Target)
	if err != nil {
		return fmt.Errorf("siege target: %w", err)
	}
	base += "/mping/"
	workers := cfg.Concurrency
	if workers < 1 {
		workers = 1
	}
	if workers > len(reqs) {
		workers = max(1, len(reqs))
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := newTransport(timeout, workers)
	if cfg.Dial != nil {
		tr.DialContext = cfg.Dial
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	var (
		mu      sync.Mutex // guards next, dropped and calls to emit
		next    int
		dropped bool // a request was cut short by cancellation
		wg      sync.WaitGroup
	)
	take := func() (Request, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(reqs) || ctx.Err() != nil {
			return Request{}, false
		}
		r := reqs[next]
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
				s := siegeOne(ctx, client, base, timeout, req)
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
	// A cancellation that came after the last request completed lost nothing.
	if err := ctx.Err(); err != nil && (next < len(reqs) || dropped) {
		return err
	}
	return nil
}

// siegeOne performs one /mping request and turns the outcome into a Sample.
func siegeOne(ctx context.Context, client *http.Client, base string, timeout time.Duration, req Request) Sample {
	s := Sample{Workload: "pingpong", Size: req.Size, Rep: req.Rep}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(rctx, http.MethodGet, base+strconv.Itoa(req.Size), nil)
	if err != nil {
		s.Error = oneLine(err.Error())
		return s
	}
	s.Time = time.Now()
	resp, err := client.Do(hreq)
	if err != nil {
		s.LatencyMS = msSince(s.Time)
		s.Error = oneLine(err.Error())
		return s
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMPingBody))
	resp.Body.Close()
	s.LatencyMS = msSince(s.Time)
	if err != nil {
		s.Error = oneLine("reading /mping answer: " + err.Error())
		return s
	}
	var m MPing
	if err := json.Unmarshal(body, &m); err != nil {
		s.Error = oneLine(fmt.Sprintf("ping answered HTTP %d with no /mping JSON: %.80q", resp.StatusCode, body))
		return s
	}
	s.DurationMS, s.Length, s.Code, s.Retries = m.Duration, m.Length, m.Code, m.Retries
	if m.Code == 0 {
		s.Error = fmt.Sprintf("ping answered HTTP %d with no code in its JSON", resp.StatusCode)
	}
	return s
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

// oneLine keeps error strings to one line so they fit CSV cells and logs.
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
