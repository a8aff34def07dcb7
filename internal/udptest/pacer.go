package udptest

import (
	"math"
	"time"
)

// Pacing granularity: the sender sleeps at least MinSleep at a time, and the
// bucket holds at most BurstWindow's worth of packets, so a late wake-up is
// caught up on while a long stall is not paid back in one burst.
const (
	MinSleep    = time.Millisecond
	BurstWindow = 5 * time.Millisecond
)

// Pacer is a token bucket releasing packets of a fixed size at a rate in
// bits per second.
type Pacer struct {
	rate   float64 // bits/s
	pkt    float64 // bits per packet
	burst  float64 // bucket size, bits
	tokens float64
	last   time.Time
}

// NewPacer returns a pacer for rate bits/s of size-byte packets whose bucket
// starts with one packet at now. rate must be > 0 and size > 0.
func NewPacer(rate int64, size int, now time.Time) *Pacer {
	p := &Pacer{rate: float64(rate), pkt: float64(size) * 8, last: now}
	p.burst = math.Max(p.pkt, p.rate*BurstWindow.Seconds())
	p.tokens = p.pkt
	return p
}

// Next says how many packets may go out at now; when none may, it says how
// long to wait (at least MinSleep).
func (p *Pacer) Next(now time.Time) (n int, wait time.Duration) {
	if dt := now.Sub(p.last); dt > 0 {
		p.tokens = math.Min(p.burst, p.tokens+dt.Seconds()*p.rate)
		p.last = now
	}
	if k := math.Floor(p.tokens / p.pkt); k >= 1 {
		p.tokens -= k * p.pkt
		return int(k), 0
	}
	wait = time.Duration((p.pkt - p.tokens) / p.rate * 1e9)
	return 0, max(wait, MinSleep)
}
