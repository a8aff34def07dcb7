// Package bounded measures what a call costs, for tests that feed a reader
// hostile input and must show it refuses at little cost: the bytes it
// allocated and the time it took, failing the test when it hangs. It
// imports nothing of cnperf, so any package's tests may use it.
package bounded

import (
	"runtime"
	"testing"
	"time"
)

// Cost runs fn and returns the bytes allocated meanwhile (by the whole
// process: keep other work out of the test) and how long it took. A call
// still running after timeout fails the test at once.
func Cost(t testing.TB, timeout time.Duration, fn func()) (alloc uint64, took time.Duration) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		t.Fatalf("still running after %s", timeout)
	}
	took = time.Since(start)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, took
}
