package grid

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

// valueSize is the 2017 Coherence thesis's value size, the client's default.
const valueSize = 700

// fakeStore is a map whose operations take step on a fake clock and fail
// when fail says so; it records what the loop asked.
type fakeStore struct {
	clock   *fakeClock
	step    time.Duration
	data    map[string][]byte
	calls   []string // "put k" / "remove k"
	fail    func(put bool, n int) bool
	maxKeys int
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func (s *fakeStore) do(put bool, key string) error {
	s.clock.t = s.clock.t.Add(s.step)
	verb := "remove"
	if put {
		verb = "put"
	}
	s.calls = append(s.calls, verb+" "+key)
	if s.fail != nil && s.fail(put, len(s.calls)) {
		return errors.New("injected")
	}
	return nil
}

func (s *fakeStore) Put(_ context.Context, key string, value []byte) error {
	if err := s.do(true, key); err != nil {
		return err
	}
	s.data[key] = value
	s.maxKeys = max(s.maxKeys, len(s.data))
	return nil
}

func (s *fakeStore) Remove(_ context.Context, key string) error {
	if err := s.do(false, key); err != nil {
		return err
	}
	delete(s.data, key)
	return nil
}

func runFake(t *testing.T, cfg Config, step time.Duration, fail func(bool, int) bool) (Result, []Interval, *fakeStore, error) {
	t.Helper()
	clock := &fakeClock{t: time.Unix(1000, 0)}
	st := &fakeStore{clock: clock, step: step, data: map[string][]byte{}, fail: fail}
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	if cfg.ValueSize == 0 {
		cfg.ValueSize = valueSize
	}
	cfg.Addr, cfg.KeyPrefix = "grid:1", "k"
	var ivs []Interval
	l := newLoop(cfg.withDefaults(), st, clock.now, func(iv Interval) { ivs = append(ivs, iv) })
	err := l.run(context.Background())
	return l.result(), ivs, st, err
}

// TestLoopAccounting: the 2017 Coherence thesis's loop removes the previous key before each
// new put, counts the puts that end within the time, and its intervals add
// up to the total.
func TestLoopAccounting(t *testing.T) {
	// Each operation takes 1 ms: a put and a remove per 2 ms, the first
	// put alone; 10 s hold 5000 puts (the one ending at 10 s is not counted).
	res, ivs, st, err := runFake(t, Config{Duration: 10 * time.Second}, time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Puts != 5000 || res.Removes != 4999 || res.Failures() != 0 {
		t.Errorf("puts %d, removes %d, failures %d; want 5000, 4999, 0", res.Puts, res.Removes, res.Failures())
	}
	if res.Duration != 10 || res.PutsPerSec != 500 || res.ValueSize != valueSize {
		t.Errorf("duration %v s, %v puts/s, value %d; want 10, 500, %d", res.Duration, res.PutsPerSec, res.ValueSize, valueSize)
	}
	if res.Put.P50 < 999 || res.Put.P50 > 1001 || res.Remove.P99 < 999 || res.Remove.P99 > 1001 {
		t.Errorf("put p50 %v µs, remove p99 %v µs; want 1000", res.Put.P50, res.Remove.P99)
	}
	if st.maxKeys != 1 {
		t.Errorf("the grid held up to %d keys; the loop keeps one", st.maxKeys)
	}
	if got := strings.Join(st.calls[:5], ", "); got != "put k0, remove k0, put k1, remove k1, put k2" {
		t.Errorf("operations %s", got)
	}
	if len(ivs) != 10 {
		t.Fatalf("%d intervals, want 10", len(ivs))
	}
	var sum int64
	for i, iv := range ivs {
		sum += iv.Puts
		if iv.Start != float64(i) || iv.End != float64(i+1) || iv.Workload != name || iv.Type != "interval" {
			t.Errorf("interval %d: %+v", i, iv)
		}
	}
	if sum != res.Puts {
		t.Errorf("intervals add up to %d puts, the total says %d", sum, res.Puts)
	}
}

// TestLoopCountsFailures: a failed put is a failure, not a put; a failed
// remove is a failure and the loop goes on with the next put.
func TestLoopCountsFailures(t *testing.T) {
	// Every third operation fails: calls 3, 6, 9... alternate remove, put.
	res, ivs, _, err := runFake(t, Config{Duration: time.Second}, time.Millisecond, func(_ bool, n int) bool { return n%3 == 0 })
	if err != nil {
		t.Fatal(err)
	}
	// 999 calls end before 1 s: put, then (remove, put) pairs; call n
	// is a put when n is odd.
	var puts, putFail, removes, removeFail int64
	for n := 1; n <= 999; n++ {
		put, failed := n%2 == 1, n%3 == 0
		switch {
		case put && failed:
			putFail++
		case put:
			puts++
		case failed:
			removeFail++
		default:
			removes++
		}
	}
	if res.Puts != puts || res.PutFailures != putFail || res.Removes != removes || res.RemoveFailures != removeFail {
		t.Errorf("got %d puts, %d failed, %d removes, %d failed; want %d, %d, %d, %d",
			res.Puts, res.PutFailures, res.Removes, res.RemoveFailures, puts, putFail, removes, removeFail)
	}
	if len(ivs) != 1 || ivs[0].Failures != putFail+removeFail || ivs[0].Puts != puts {
		t.Errorf("intervals %+v", ivs)
	}
}

// TestLoopGivesUp: when nothing succeeds for GiveUp, the run ends with an
// error naming the last failure, and the failures are counted.
func TestLoopGivesUp(t *testing.T) {
	res, _, _, err := runFake(t, Config{Duration: time.Minute, GiveUp: time.Second}, 10*time.Millisecond,
		func(bool, int) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "no operation succeeded") || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("err = %v; want it to give up naming the failure", err)
	}
	if res.Puts != 0 || res.Failures() < 100 {
		t.Errorf("%d puts, %d failures", res.Puts, res.Failures())
	}
}

// TestLoopSlowOperation: an operation longer than an interval leaves empty
// intervals between, and one that ends after the end is not counted.
func TestLoopSlowOperation(t *testing.T) {
	res, ivs, _, err := runFake(t, Config{Duration: 10 * time.Second}, 3*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	// put 3 s, remove 6 s, put 9 s; the remove ending at 12 s is out.
	if res.Puts != 2 || res.Removes != 1 || len(ivs) != 10 {
		t.Errorf("%d puts, %d removes, %d intervals; want 2, 1, 10", res.Puts, res.Removes, len(ivs))
	}
	if ivs[2].Puts != 0 || ivs[3].Puts != 1 || ivs[9].Puts != 1 {
		t.Errorf("intervals %+v", ivs)
	}
}

// TestLoopInterrupted: a cancelled context ends the run with what was
// measured and the context's error.
func TestLoopInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st := &cancelStore{cancelAt: 100, cancel: cancel}
	res, err := Run(ctx, Config{Addr: "grid:1", Duration: time.Hour, Interval: time.Second, ValueSize: 7}, st, nil)
	if !errors.Is(err, context.Canceled) || res.Puts < 49 || res.Puts > 51 {
		t.Errorf("%d puts, %v; want about 50 and context.Canceled", res.Puts, err)
	}
}

type cancelStore struct {
	n        int
	cancelAt int
	cancel   func()
}

func (s *cancelStore) Put(context.Context, string, []byte) error {
	if s.n++; s.n == s.cancelAt {
		s.cancel()
	}
	return nil
}
func (s *cancelStore) Remove(context.Context, string) error { return s.Put(nil, "", nil) }

// TestConfigBounds: every setting from outside has a bound.
func TestConfigBounds(t *testing.T) {
	ok := Config{Addr: "h:1", Duration: time.Second, Interval: time.Second, ValueSize: 700}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mod  func(*Config)
		flag string
	}{
		{func(c *Config) { c.Addr = "" }, "--server"},
		{func(c *Config) { c.Duration = 0 }, "--time"},
		{func(c *Config) { c.Duration = workload.MaxDuration + 1 }, "--time"},
		{func(c *Config) { c.Interval = time.Millisecond }, "--interval"},
		{func(c *Config) { c.ValueSize = 0 }, "--value-size"},
		{func(c *Config) { c.ValueSize = descriptors.GridMaxValueSize + 1 }, "--value-size"},
		{func(c *Config) { c.Timeout = -1 }, "--timeout"},
		{func(c *Config) { c.Timeout = descriptors.GridMaxTimeout + 1 }, "--timeout"},
	} {
		c := ok
		tc.mod(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.flag) {
			t.Errorf("%+v: %v; want an error naming %s", c, err, tc.flag)
		}
	}
}
