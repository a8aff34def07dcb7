package udpseq

import (
	"testing"
	"time"
)

// As udptest uses it: Next, BurstWindow, MinSleep.
func TestPacerNext(t *testing.T) {
	// 10 Mbit/s of 1250-byte packets: 1000 packets/s.
	tests := []struct {
		name     string
		oversl   time.Duration // how late each sleep wakes
		stallAt  int           // a 1 s stall after this many wake-ups (0: none)
		min, max int
	}{
		{"exact sleeps", 0, 0, 995, 1005},
		{"late wake-ups", 700 * time.Microsecond, 0, 995, 1005},
		{"stall not paid back", 0, 100, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Unix(0, 0)
			now := t0
			p := NewPacer(now, 10_000_000, 1250, BurstWindow, MinSleep)
			sent, wakes, maxBurst := 0, 0, 0
			end := t0.Add(time.Second)
			if tc.stallAt > 0 {
				end = t0.Add(2 * time.Second)
			}
			for now.Before(end) {
				n, wait := p.Next(now)
				if n > 0 {
					sent += n
					maxBurst = max(maxBurst, n)
					continue
				}
				if wait < MinSleep {
					t.Fatalf("wait %s below %s", wait, MinSleep)
				}
				wakes++
				now = now.Add(wait + tc.oversl)
				if wakes == tc.stallAt {
					now = now.Add(time.Second)
				}
			}
			if maxBurst > 5 { // BurstWindow (5 ms) at 1000 packets/s
				t.Errorf("burst of %d packets", maxBurst)
			}
			if tc.stallAt > 0 {
				// One second lost to the stall: about 1000 packets, not 2000.
				if sent < 990 || sent > 1010 {
					t.Errorf("sent %d over 2 s with a 1 s stall, want about 1000", sent)
				}
				return
			}
			if sent < tc.min || sent > tc.max {
				t.Errorf("sent %d in 1 s, want %d..%d", sent, tc.min, tc.max)
			}
		})
	}
}

// As stream uses it: Wait and Sent, a 4 ms burst, no minimum sleep.
func TestPacerWait(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := NewPacer(t0, 8_000_000, 1000, 4*time.Millisecond, 0) // 1 MB/s, 1000-byte writes: one per ms
	if d := p.Wait(t0); d != 0 {
		t.Fatalf("first write waits %s, want 0", d)
	}
	p.Sent()
	if d := p.Wait(t0); d < 900*time.Microsecond || d > 1100*time.Microsecond {
		t.Fatalf("second write waits %s, want ~1ms", d)
	}
	// After a long stall, credit is capped at the burst (4 ms = 4 writes).
	now := t0.Add(time.Second)
	n := 0
	for p.Wait(now) == 0 {
		p.Sent()
		n++
	}
	if n != 4 {
		t.Fatalf("burst after a stall: %d writes, want 4", n)
	}
	// No minimum sleep: a short wait is asked for as it is.
	if d := p.Wait(now.Add(990 * time.Microsecond)); d <= 0 || d > 20*time.Microsecond {
		t.Fatalf("wait 10µs before the next write: got %s", d)
	}
}
