package serverkit

import (
	"runtime"
	"sync"
	"time"
)

// Procs sets GOMAXPROCS from the Ps a server's hot threads hold: a
// goroutine in raw blocking calls keeps its thread and its P while it
// waits, so the rest of the server needs others. Each server says how
// many it wants (Want); Procs counts the Ps lent and applies it.
type Procs struct {
	// Want is GOMAXPROCS with held Ps lent, base being what the process
	// had at Start; it is called under Procs' lock at every change.
	Want func(held, base int) int

	mu         sync.Mutex
	held, base int
}

// Start notes the process's GOMAXPROCS as the base and applies Want; the
// returned restore puts the base back.
func (p *Procs) Start() (restore func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.base = runtime.GOMAXPROCS(0)
	p.apply()
	return func() { runtime.GOMAXPROCS(p.Base()) }
}

// Base is GOMAXPROCS when Start ran; 0 before.
func (p *Procs) Base() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.base
}

// Lend lends one more P (n = 1) or takes one back (n = -1).
func (p *Procs) Lend(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held += n
	p.apply()
}

func (p *Procs) apply() {
	if want := p.Want(p.held, p.base); runtime.GOMAXPROCS(0) != want {
		runtime.GOMAXPROCS(want)
	}
}

// AtLeastProcs raises GOMAXPROCS to at least n (a P for each thread that
// holds one throughout, and one for the rest) and returns its undoing.
func AtLeastProcs(n int) (restore func()) {
	prev := runtime.GOMAXPROCS(0)
	if prev >= n {
		return func() {}
	}
	runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(prev) }
}

// Yielder lets the scheduler into a hot loop that never blocks in it: a
// yield every so often runs timers and the rest of the process on the
// loop's P, and sysmon never has to preempt the loop.
type Yielder struct{ last time.Duration }

// Maybe yields if every has passed since the last yield; now is the
// loop's clock.
func (y *Yielder) Maybe(now, every time.Duration) {
	if now-y.last >= every {
		runtime.Gosched()
		y.last = now
	}
}
