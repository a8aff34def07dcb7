package grid

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/hdrtime"
)

// Store is the data grid as the loop sees it: a partitioned map whose
// every operation crosses the network (the client stores nothing).
type Store interface {
	Put(ctx context.Context, key string, value []byte) error
	Remove(ctx context.Context, key string) error
}

// Config is one run of the 2017 Coherence thesis's loop.
type Config struct {
	Addr      string        // the storage member, HOST:PORT
	Duration  time.Duration // how long the loop runs
	Interval  time.Duration // reporting interval
	ValueSize int           // bytes of each value (the 2017 Coherence thesis: 700 characters)
	Timeout   time.Duration // bound on one operation
	// GiveUp ends the run with an error when no operation has succeeded
	// for this long (a member that is gone), so that failures counted are
	// the grid's, not a dead server's.
	GiveUp time.Duration
	// KeyPrefix keeps keys of clients running at once apart; "" picks one
	// from the clock.
	KeyPrefix string
}

// Bounds of the client's settings.
const (
	DefaultTimeout  = 5 * time.Second
	DefaultGiveUp   = 10 * time.Second
	maxPrefixLength = 64
)

// Validate checks the settings against their bounds, naming the flags.
func (c Config) Validate() error {
	switch {
	case c.Addr == "":
		return errors.New("--server: required")
	case c.Duration <= 0 || c.Duration > workload.MaxDuration:
		return fmt.Errorf("--time %s: want more than 0s and at most %s", c.Duration, workload.MaxDuration)
	case c.Interval < workload.MinInterval:
		return fmt.Errorf("--interval %s: must be >= %s", c.Interval, workload.MinInterval)
	case c.ValueSize < 1 || c.ValueSize > descriptors.GridMaxValueSize:
		return fmt.Errorf("--value-size %d: want 1..%d bytes", c.ValueSize, descriptors.GridMaxValueSize)
	case c.Timeout < 0 || c.Timeout > descriptors.GridMaxTimeout:
		return fmt.Errorf("--timeout %s: want 0s (default %s) up to %s", c.Timeout, DefaultTimeout, descriptors.GridMaxTimeout)
	case len(c.KeyPrefix) > maxPrefixLength:
		return fmt.Errorf("key prefix of %d bytes: at most %d", len(c.KeyPrefix), maxPrefixLength)
	}
	return nil
}

func (c Config) withDefaults() Config {
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.GiveUp = cmp.Or(c.GiveUp, DefaultGiveUp)
	if c.KeyPrefix == "" {
		c.KeyPrefix = "cnperf-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
	}
	return c
}

// Latency is a distribution of one operation's time in microseconds.
type Latency struct {
	Min  float64 `json:"min_us"`
	Mean float64 `json:"mean_us"`
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P99  float64 `json:"p99_us"`
	P999 float64 `json:"p999_us"`
	Max  float64 `json:"max_us"`
}

// Result is the end record: what the loop did in the measured time.
type Result struct {
	Workload       string    `json:"workload"`
	Type           string    `json:"type"` // "result"
	Time           time.Time `json:"time"`
	Duration       float64   `json:"duration_s"`
	ValueSize      int       `json:"value_size"`
	Puts           int64     `json:"puts"` // successful
	PutFailures    int64     `json:"put_failures"`
	Removes        int64     `json:"removes"` // successful
	RemoveFailures int64     `json:"remove_failures"`
	PutsPerSec     float64   `json:"puts_per_s"`
	Put            Latency   `json:"put"`
	Remove         Latency   `json:"remove"`
}

// Failures are the failed operations, puts and removes.
func (r Result) Failures() int64 { return r.PutFailures + r.RemoveFailures }

// Interval is one reporting interval's record.
type Interval struct {
	Workload   string  `json:"workload"`
	Type       string  `json:"type"` // "interval"
	Start      float64 `json:"start_s"`
	End        float64 `json:"end_s"`
	Puts       int64   `json:"puts"`
	Failures   int64   `json:"failures"`
	PutsPerSec float64 `json:"puts_per_s"`
	PutP50     float64 `json:"put_p50_us"`
	PutP99     float64 `json:"put_p99_us"`
}

// counts are one span's operations.
type counts struct {
	put, remove         *hdr.Histogram
	putFail, removeFail int64
}

func newCounts() counts { return counts{put: hdrtime.New(), remove: hdrtime.New()} }

func (c *counts) reset() {
	c.put.Reset()
	c.remove.Reset()
	c.putFail, c.removeFail = 0, 0
}

// loop is one run's state; its clock is a function so that tests can
// drive it.
type loop struct {
	cfg   Config
	store Store
	now   func() time.Time
	value []byte
	start time.Time
	end   time.Time
	total counts
	iv    counts
	from  time.Time // the current interval's start
	emit  func(Interval)
	// lastOK is when an operation last succeeded (or the run started).
	lastOK  time.Time
	lastErr error
}

// Run runs the 2017 Coherence thesis's loop against store for cfg.Duration: remove the
// previous key, put the value under a new key. It calls emit (if not nil)
// after every interval and returns what was measured; if ctx ends first,
// what was measured so far and ctx's error.
func Run(ctx context.Context, cfg Config, store Store, emit func(Interval)) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	l := newLoop(cfg.withDefaults(), store, time.Now, emit)
	err := l.run(ctx)
	return l.result(), err
}

func newLoop(cfg Config, store Store, now func() time.Time, emit func(Interval)) *loop {
	l := &loop{cfg: cfg, store: store, now: now, emit: emit, total: newCounts(), iv: newCounts(),
		value: []byte(strings.Repeat("x", cfg.ValueSize))}
	l.start = now()
	l.end = l.start.Add(cfg.Duration)
	l.from, l.lastOK = l.start, l.start
	return l
}

// run is the loop itself, one operation at a time as the 2017 Coherence thesis's client.
func (l *loop) run(ctx context.Context) error {
	key := make([]byte, 0, len(l.cfg.KeyPrefix)+20)
	prev := ""
	for i := int64(0); ; i++ {
		if err := ctx.Err(); err != nil {
			l.flush(l.now())
			return err
		}
		if prev != "" {
			if done := l.op(ctx, false, prev); done {
				break
			}
		}
		key = strconv.AppendInt(append(key[:0], l.cfg.KeyPrefix...), i, 10)
		prev = string(key)
		if done := l.op(ctx, true, prev); done {
			break
		}
		if t := l.now(); t.Sub(l.lastOK) > l.cfg.GiveUp {
			l.flush(t)
			return fmt.Errorf("grid at %s: no operation succeeded for %s: %w", l.cfg.Addr, t.Sub(l.lastOK).Round(time.Millisecond), l.lastErr)
		}
	}
	l.flush(l.end)
	return nil
}

// op runs one put or remove and accounts for it; true when the run's time
// is over (an operation ending after the end is not counted).
func (l *loop) op(ctx context.Context, put bool, key string) bool {
	octx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	t0 := l.now()
	var err error
	if put {
		err = l.store.Put(octx, key, l.value)
	} else {
		err = l.store.Remove(octx, key)
	}
	t1 := l.now()
	cancel()
	if !t1.Before(l.end) {
		return true
	}
	l.intervalsUpTo(t1)
	l.account(put, err, t1.Sub(t0))
	if err == nil {
		l.lastOK = t1
	} else if ctx.Err() == nil {
		l.lastErr = err
	}
	return false
}

// account adds one operation to the interval's and the total's counts.
func (l *loop) account(put bool, err error, d time.Duration) {
	for _, c := range []*counts{&l.iv, &l.total} {
		switch {
		case put && err == nil:
			hdrtime.Record(c.put, d)
		case put:
			c.putFail++
		case err == nil:
			hdrtime.Record(c.remove, d)
		default:
			c.removeFail++
		}
	}
}

// intervalsUpTo reports every interval that ended before t.
func (l *loop) intervalsUpTo(t time.Time) {
	for l.from.Before(l.end) {
		next := l.from.Add(l.cfg.Interval)
		if next.After(l.end) {
			next = l.end
		}
		if t.Before(next) {
			return
		}
		l.report(next)
	}
}

// flush reports what the current interval holds, ending at t.
func (l *loop) flush(t time.Time) {
	l.intervalsUpTo(t)
	if t.After(l.from) && (l.iv.put.TotalCount() > 0 || l.iv.putFail+l.iv.removeFail > 0 || l.iv.remove.TotalCount() > 0) {
		l.report(t)
	}
}

func (l *loop) report(to time.Time) {
	span := to.Sub(l.from)
	if l.emit != nil && span > 0 {
		n := l.iv.put.TotalCount()
		l.emit(Interval{Workload: name, Type: "interval", Start: l.from.Sub(l.start).Seconds(), End: to.Sub(l.start).Seconds(),
			Puts: n, Failures: l.iv.putFail + l.iv.removeFail, PutsPerSec: float64(n) / span.Seconds(),
			PutP50: hdrtime.US(l.iv.put.ValueAtQuantile(50)), PutP99: hdrtime.US(l.iv.put.ValueAtQuantile(99))})
	}
	l.iv.reset()
	l.from = to
}

// result is the total of the measured time.
func (l *loop) result() Result {
	r := Result{Workload: name, Type: "result", Time: l.start, ValueSize: l.cfg.ValueSize,
		Puts: l.total.put.TotalCount(), PutFailures: l.total.putFail,
		Removes: l.total.remove.TotalCount(), RemoveFailures: l.total.removeFail,
		Put: Latency(hdrtime.Summarise(l.total.put)), Remove: Latency(hdrtime.Summarise(l.total.remove))}
	stopped := l.now()
	if stopped.After(l.end) {
		stopped = l.end
	}
	if d := stopped.Sub(l.start); d > 0 {
		r.Duration = d.Seconds()
		r.PutsPerSec = float64(r.Puts) / d.Seconds()
	}
	return r
}
