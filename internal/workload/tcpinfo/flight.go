package tcpinfo

import (
	"sync"
	"time"
)

// flight shares a Book's snapshots among the callers that ask at once:
// at most one read runs at a time, and a caller gets the result of a read
// that began after it asked. The read in flight when it asks began
// before, and may have listed the connections before something the
// caller waits to see (its own cell's end); so it waits for the next
// read, which every caller arriving meanwhile shares.
//
// A read begins no sooner after the last one ended than that one took:
// callers asking without pause keep at most half of one CPU reading (back
// to back, the reads of 3,000 connections for 200 clients took a CPU of
// two, and a new connection's exchange beside them took twice as long).
// A caller waits for at most three reads' time.
type flight struct {
	mu    sync.Mutex
	busy  bool          // a read runs, or waits to begin
	ended chan struct{} // closed when the busy read ends
	next  *result       // the read the callers arriving now share; nil: none yet
	rest  time.Time     // no read begins before
}

// result is one read's snapshot, set before done is closed.
type result struct {
	done chan struct{}
	s    Snapshot
}

// do returns the snapshot of a call of read that began after do was called.
func (f *flight) do(read func() Snapshot) Snapshot {
	f.mu.Lock()
	r := f.next
	if r == nil {
		r = &result{done: make(chan struct{})}
		f.next = r
	}
	for f.busy && f.next == r {
		ended := f.ended
		f.mu.Unlock()
		<-ended
		f.mu.Lock()
	}
	if f.next != r { // another caller runs r's read (or ran it)
		f.mu.Unlock()
		<-r.done
		return r.s
	}
	f.busy, f.ended = true, make(chan struct{})
	rest := f.rest
	f.mu.Unlock()
	if d := time.Until(rest); d > 0 {
		time.Sleep(d) // callers arriving meanwhile join r
	}
	f.mu.Lock()
	f.next = nil // r's read begins: who asks from now on waits for the next
	f.mu.Unlock()
	start := time.Now()
	r.s = read()
	end := time.Now()
	f.mu.Lock()
	f.busy, f.rest = false, end.Add(end.Sub(start))
	close(f.ended)
	f.mu.Unlock()
	close(r.done)
	return r.s
}
