package udpseq

import (
	"math"
	"time"
)

// Pacing granularity as the jitter and datagram workloads use it: the
// sender sleeps at least MinSleep at a time, and the bucket holds at most
// BurstWindow's worth of packets, so a late wake-up is caught up on while a
// long stall is not paid back in one burst.
const (
	MinSleep    = time.Millisecond
	BurstWindow = 5 * time.Millisecond
)

// Pacer is a token bucket releasing packets of a fixed size at a rate in
// bits per second.
type Pacer struct {
	rate     float64 // bits/s
	pkt      float64 // bits per packet
	burst    float64 // bucket size, bits
	minSleep time.Duration
	tokens   float64
	last     time.Time
}

// NewPacer returns a pacer for rate bits/s of size-byte packets whose bucket
// starts with one packet at now and holds burst's worth of packets (at
// least one); when no packet may go, it asks to wait at least minSleep.
// rate must be > 0 and size > 0.
func NewPacer(now time.Time, rate int64, size int, burst, minSleep time.Duration) *Pacer {
	p := &Pacer{rate: float64(rate), pkt: float64(size) * 8, minSleep: minSleep, last: now}
	p.burst = math.Max(p.pkt, p.rate*burst.Seconds())
	p.tokens = p.pkt
	return p
}

func (p *Pacer) fill(now time.Time) {
	if dt := now.Sub(p.last); dt > 0 {
		p.tokens = math.Min(p.burst, p.tokens+dt.Seconds()*p.rate)
		p.last = now
	}
}

// short is how long until the bucket holds one packet.
func (p *Pacer) short() time.Duration {
	if p.tokens >= p.pkt {
		return 0
	}
	return time.Duration((p.pkt - p.tokens) / p.rate * 1e9)
}

// Next takes every packet that may go out at now and says how many; when
// none may, it says how long to wait (at least the minimum sleep).
func (p *Pacer) Next(now time.Time) (n int, wait time.Duration) {
	p.fill(now)
	if k := math.Floor(p.tokens / p.pkt); k >= 1 {
		p.tokens -= k * p.pkt
		return int(k), 0
	}
	return 0, max(p.short(), p.minSleep)
}

// Wait is how long to wait at now before the next packet may go: 0 when it
// may go now (then call Sent), else at least the minimum sleep.
func (p *Pacer) Wait(now time.Time) time.Duration {
	p.fill(now)
	if d := p.short(); d > 0 {
		return max(d, p.minSleep)
	}
	return 0
}

// Sent takes one packet from the bucket.
func (p *Pacer) Sent() { p.tokens -= p.pkt }
