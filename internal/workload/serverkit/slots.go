package serverkit

import (
	"context"
	"fmt"
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
