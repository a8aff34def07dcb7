package serverkit

import (
	"sync/atomic"
	"time"
)

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
