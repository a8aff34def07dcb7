package serverkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// MaxTests bounds `cnperf serve stream|udp --tests`: the tests (clients
// measured, each a session with its own records) a server runs at once.
const MaxTests = 1024

// CheckTests refuses a --tests outside [1, MaxTests].
func CheckTests(n int) error {
	if n < 1 || n > MaxTests {
		return fmt.Errorf("--tests %d: must be in [1, %d]", n, MaxTests)
	}
	return nil
}

// Slots admits up to n tests at once: a test holds its slot from its
// request until its answer is out, so that no more tests' records and
// answers than slots are ever held. A request finding every slot taken is
// told busy, unless a test is sending its answer: a client's next test may
// arrive before the server has let go of its last one.
type Slots struct {
	slot      chan struct{}
	answering atomic.Int32
}

// NewSlots makes n test slots.
func NewSlots(n int) *Slots { return &Slots{slot: make(chan struct{}, n)} }

// Take takes a slot for a new test. When all are taken, it waits for a
// test that is sending its answer, no longer than wait; false: busy.
func (s *Slots) Take(ctx context.Context, wait time.Duration) bool {
	select {
	case s.slot <- struct{}{}:
		return true
	default:
		if s.answering.Load() == 0 {
			return false
		}
	}
	select {
	case s.slot <- struct{}{}:
		return true
	case <-time.After(wait):
	case <-ctx.Done():
	}
	return false
}

// Answering says a slot's test has begun its answer; its Release must
// then say so too.
func (s *Slots) Answering() { s.answering.Add(1) }

// Release gives back a slot; answering: its test had called Answering.
func (s *Slots) Release(answering bool) {
	if answering {
		s.answering.Add(-1)
	}
	<-s.slot
}

// Gate bounds the connections a server serves at once: beyond its cap a
// new one is refused (closed, or told busy) rather than hold buffers and a
// goroutine. Refusals are logged at most once a second.
type Gate struct {
	in      chan struct{}
	refused atomic.Int64 // connections refused so far
	lastLog atomic.Int64 // unix ns of the last "too many" line
}

// NewGate admits up to n connections at once.
func NewGate(n int) *Gate { return &Gate{in: make(chan struct{}, n)} }

// Cap is how many connections the gate admits at once.
func (g *Gate) Cap() int { return cap(g.in) }

// Enter admits a connection; false: the gate is full.
func (g *Gate) Enter() bool {
	select {
	case g.in <- struct{}{}:
		return true
	default:
		return false
	}
}

// Leave lets an admitted connection go.
func (g *Gate) Leave() { <-g.in }

// Refuse counts a connection the gate did not admit and, at most once a
// second, logs "too many WHAT (CAP at once): N refused so far".
func (g *Gate) Refuse(logf func(format string, a ...any), what string) {
	n := g.refused.Add(1)
	if now := time.Now().UnixNano(); now-g.lastLog.Load() > int64(time.Second) {
		g.lastLog.Store(now)
		logf("too many %s (%d at once): %d refused so far", what, g.Cap(), n)
	}
}

// Serve is a server's accept loop: each connection accept returns is
// served in a goroutine of its own while the gate admits it, with a
// context that ends with ctx or with the loop; one the gate does not
// admit is counted (Refuse: "too many WHAT") and handed to refused, or
// closed when refused is nil. Serve returns once ctx has ended (nil) or
// the listener failed (its error), and every serve has returned.
func (g *Gate) Serve(ctx context.Context, next func() (net.Conn, error), logf func(format string, a ...any), what string,
	serve func(context.Context, net.Conn), refused func(net.Conn)) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for {
		c, err := accept(ctx, next, logf)
		if c == nil {
			return err
		}
		if !g.Enter() {
			g.Refuse(logf, what)
			if refused == nil {
				c.Close()
			} else {
				refused(c)
			}
			continue
		}
		wg.Go(func() {
			defer g.Leave()
			serve(ctx, c)
		})
	}
}

// accept waits for a server's next connection until ctx ends (nil, nil)
// or the listener is closed (its error). Other errors (out of descriptors,
// say) are logged and retried after a pause that doubles up to a second,
// so that the server outlives them.
func accept(ctx context.Context, next func() (net.Conn, error), logf func(format string, a ...any)) (net.Conn, error) {
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		c, err := next()
		switch {
		case err == nil:
			return c, nil
		case ctx.Err() != nil:
			return nil, nil
		case errors.Is(err, net.ErrClosed):
			return nil, err
		}
		logf("accept: %v", err)
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(delay):
		}
	}
}
