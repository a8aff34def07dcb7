// Package stress burns a share of CPU, the cpu_stress condition (Zismer
// 2016 loaded the hosts with stress-ng while measuring): each thread spins
// for the share of every 10 ms period and sleeps the rest, optionally only
// in the "on" part of each on+off window. The netns driver starts it as
// `cnperf stress`, pinned to a host's CPUs.
package stress

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// Config says how much to burn.
type Config struct {
	Share   float64       // share of each CPU, in (0, 1)
	Threads int           // threads, one per CPU to load, 1..MaxThreads
	On, Off time.Duration // burn for On, pause for Off, over and over; both 0: always
}

// MaxThreads bounds the threads one stress starts.
const MaxThreads = 1024

// period is the time a thread's share is a share of.
const period = 10 * time.Millisecond

// Validate refuses a configuration no stress can burn, in the words of
// `cnperf stress`'s flags.
func (c Config) Validate() error {
	switch {
	case c.Share <= 0 || c.Share >= 1:
		return fmt.Errorf("--share %g: want (0, 1)", c.Share)
	case c.Threads < 1 || c.Threads > MaxThreads:
		return fmt.Errorf("--threads %d: want 1..%d", c.Threads, MaxThreads)
	case (c.On == 0) != (c.Off == 0) || c.On < 0 || c.Off < 0:
		return fmt.Errorf("--on %s --off %s: give both, > 0, or neither", c.On, c.Off)
	}
	return nil
}

// Burn burns c's share on c.Threads threads until ctx ends. c must be
// valid (Validate).
func Burn(ctx context.Context, c Config) {
	busy := time.Duration(c.Share * float64(period))
	t0 := time.Now()
	for range c.Threads {
		go func() {
			runtime.LockOSThread()
			for ctx.Err() == nil {
				start := time.Now()
				if burning(start.Sub(t0), c.On, c.Off) {
					for time.Since(start) < busy {
					}
				}
				// Pacing, not synchronisation: the rest of the period idle.
				time.Sleep(period - min(busy, time.Since(start)))
			}
		}()
	}
	<-ctx.Done()
}

// burning says whether the stress burns at elapsed since its start: always,
// or in the on part of each on+off window.
func burning(elapsed, on, off time.Duration) bool {
	return on == 0 || elapsed%(on+off) < on
}
