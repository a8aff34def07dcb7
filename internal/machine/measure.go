package machine

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/cost"
)

// processingBytes is the fixed CPU workload: SHA-256 over this many bytes
// on one thread (about a second on a 2020s core). Fixed, so that its time
// compares across machines.
const processingBytes = 512 << 20

// ProcessingTime hashes processingBytes and returns the seconds it took.
func ProcessingTime() float64 {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	h := sha256.New()
	start := time.Now()
	for range processingBytes / len(buf) {
		h.Write(buf)
	}
	_ = h.Sum(nil)
	return time.Since(start).Seconds()
}

// Bounds of the memory bandwidth test's arrays (each of three).
const (
	minTriadBytes = 64 << 20
	maxTriadBytes = 1 << 30
)

// triadBytes sizes each array at 4× the largest cache (STREAM's rule),
// at least minTriadBytes, at most maxTriadBytes and an eighth of the
// available memory.
func triadBytes() int64 {
	n := max(minTriadBytes, 4*largestCache())
	if avail, _ := cost.MemInfo("MemAvailable:"); avail > 0 {
		n = min(n, avail/8)
	}
	return min(n, maxTriadBytes)
}

// MemoryBandwidth runs STREAM's triad a[i] = b[i] + s·c[i] on all threads
// and returns the best pass's bytes per second (24 bytes an element, as
// STREAM counts them).
func MemoryBandwidth() float64 {
	n := int(triadBytes() / 8)
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	workers := runtime.GOMAXPROCS(0)
	parallel := func(fn func(lo, hi int)) {
		var wg sync.WaitGroup
		for w := range workers {
			lo, hi := w*n/workers, (w+1)*n/workers
			wg.Add(1)
			go func() { defer wg.Done(); fn(lo, hi) }()
		}
		wg.Wait()
	}
	// Touch every page first, from the threads that will use it.
	parallel(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a[i], b[i], c[i] = 1, 2, 0.5
		}
	})
	best := 0.0
	for range 5 {
		start := time.Now()
		parallel(func(lo, hi int) {
			const s = 3.0
			aa, bb, cc := a[lo:hi], b[lo:hi], c[lo:hi]
			for i := range aa {
				aa[i] = bb[i] + s*cc[i]
			}
		})
		if sec := time.Since(start).Seconds(); sec > 0 {
			best = max(best, float64(24*n)/sec)
		}
	}
	return best
}

// largestCache is the largest CPU cache of cpu0 in bytes (0 if unknown).
func largestCache() int64 {
	var largest int64
	for i := range 8 {
		b, err := os.ReadFile(fmt.Sprintf("/sys/devices/system/cpu/cpu0/cache/index%d/size", i))
		if err != nil {
			break
		}
		largest = max(largest, parseSize(strings.TrimSpace(string(b))))
	}
	return largest
}

// parseSize reads sysfs's cache sizes: "32K", "1024K", "36M".
func parseSize(s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n * mult
}

// errNoMeasure is a measurement that gave nothing to divide by.
var errNoMeasure = errors.New("took no measurable time")
