package pingpong

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxConcurrency bounds siege's requests in flight (each holds a connection
// to ping, and ping one to pong).
const MaxConcurrency = 1024

// SiegeConfig tells siege which ping to load and how.
type SiegeConfig struct {
	Target      string        // base URL of ping, e.g. http://198.18.0.2:8080
	Concurrency int           // parallel workers; 0 means 1; at most MaxConcurrency
	Timeout     time.Duration // per request; 0 means DefaultTimeout; at most MaxTimeout
	// Dial, when set, opens siege's connections (the runner's dials from
	// inside the siege host's network namespace); nil dials normally.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// CheckTarget reports a ping URL siege cannot use: it must be
// http(s)://host[:port][/prefix], without user info, query or fragment.
func CheckTarget(raw string) error {
	_, err := checkBaseURL(raw)
	return err
}

// CheckConcurrency reports a concurrency outside 1..MaxConcurrency.
func CheckConcurrency(n int) error {
	if n < 1 || n > MaxConcurrency {
		return rangeError(n, 1, MaxConcurrency)
	}
	return nil
}

// maxMPingBody bounds what siege reads from ping: an /mping answer is tens of
// bytes, anything larger is not ping.
const maxMPingBody = 64 << 10

// Siege sends GET Target/mping/{size} for every request, with Concurrency
// workers taking requests from one queue in plan order, and hands each
// result to emit. emit is never called concurrently. Failed requests are
// emitted with Error set; siege keeps going. If ctx is cancelled, Siege
// stops taking requests, drops those the cancellation cut short, and
// returns ctx.Err(); otherwise it returns nil once every request was tried.
func Siege(ctx context.Context, cfg SiegeConfig, reqs []Request, emit func(Sample)) error {
	return siege(ctx, cfg, len(reqs), func(i int) Request { return reqs[i] }, emit)
}

// SiegePlan is Siege over Requests(sizes, reps) without building that list:
// memory stays O(len(sizes)) for any number of repetitions.
func SiegePlan(ctx context.Context, cfg SiegeConfig, sizes []int, reps int, emit func(Sample)) error {
	if reps < 1 || reps > MaxRepetitions || len(sizes) > MaxPlanSizes {
		return fmt.Errorf("siege plan of %d sizes × %d repetitions: want 1..%d repetitions of at most %d sizes", len(sizes), reps, MaxRepetitions, MaxPlanSizes)
	}
	return siege(ctx, cfg, len(sizes)*reps, func(i int) Request { return Request{Size: sizes[i/reps], Rep: i % reps} }, emit)
}

func siege(ctx context.Context, cfg SiegeConfig, total int, at func(int) Request, emit func(Sample)) error {
	base, err := checkBaseURL(cfg.Target)
	if err != nil {
		return fmt.Errorf("siege target: %w", err)
	}
	base += "/mping/"
	workers := cfg.Concurrency
	if workers == 0 {
		workers = 1
	}
	if err := CheckConcurrency(workers); err != nil {
		return fmt.Errorf("siege concurrency %w", err)
	}
	workers = min(workers, max(1, total))
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if err := CheckTimeout(timeout); err != nil {
		return fmt.Errorf("siege timeout %w", err)
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
		if next >= total || ctx.Err() != nil {
			return Request{}, false
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
	if err := ctx.Err(); err != nil && (next < total || dropped) {
		return err
	}
	return nil
}

// siegeOne performs one /mping request and turns the outcome into a Sample.
// Ping's answer is read whatever its HTTP status (the original answers 200
// even when it gave up; cnperf's ping up to 0.1 answered 503 then). A 200
// exchange whose length is no whole pong body for the size is an error: a
// wrong length is not a good message, whichever ping reported it.
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
	m, err := ParseMPing(body)
	if err != nil {
		s.Error = oneLine(fmt.Sprintf("ping answered HTTP %d with no /mping answer (%v): %.80q", resp.StatusCode, err, body))
		return s
	}
	s.DurationMS, s.Length, s.Code, s.Retries = m.Duration, m.Length, m.Code, m.Retries
	if m.Code == http.StatusOK && !LengthOK(req.Size, m.Length) {
		s.Error = fmt.Sprintf("ping reported code 200 with a %d-byte body for size %d", m.Length, req.Size)
	}
	return s
}

// Bounds of a plausible /mping answer; an int field above maxWhole cannot be
// told apart from its neighbours once JSON made it a float.
const (
	maxWhole   = 1 << 53
	maxHTTPish = 999
)

// ParseMPing reads ping's /mping answer: a JSON object with the original's
// four keys, length, code and retries whole numbers (4 and 4.0 alike),
// duration a number; code in 100..999, the others not negative. Other keys
// are ignored.
func ParseMPing(body []byte) (MPing, error) {
	var raw struct {
		Duration, Length, Code, Retries *json.Number
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return MPing{}, fmt.Errorf("not JSON: %v", oneLine(err.Error()))
	}
	var m MPing
	whole := func(name string, n *json.Number, lo int, dst *int) error {
		if n == nil {
			return fmt.Errorf("no %q", name)
		}
		f, err := strconv.ParseFloat(string(*n), 64)
		if err != nil || f != math.Trunc(f) || f < float64(lo) || f > maxWhole {
			return fmt.Errorf("%q is %.30s, want a whole number >= %d", name, *n, lo)
		}
		*dst = int(f)
		return nil
	}
	if err := whole("length", raw.Length, 0, &m.Length); err != nil {
		return MPing{}, err
	}
	if err := whole("code", raw.Code, 100, &m.Code); err != nil {
		return MPing{}, err
	}
	if m.Code > maxHTTPish {
		return MPing{}, fmt.Errorf(`"code" is %d, want an HTTP status`, m.Code)
	}
	if err := whole("retries", raw.Retries, 0, &m.Retries); err != nil {
		return MPing{}, err
	}
	if raw.Duration == nil {
		return MPing{}, errors.New(`no "duration"`)
	}
	d, err := strconv.ParseFloat(string(*raw.Duration), 64)
	if err != nil || d < 0 || math.IsInf(d, 0) {
		return MPing{}, fmt.Errorf(`"duration" is %.30s, want a number of ms >= 0`, *raw.Duration)
	}
	m.Duration = d
	return m, nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

// oneLine keeps error strings to one line so they fit CSV cells and logs.
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
