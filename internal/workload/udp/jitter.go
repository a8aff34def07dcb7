package udp

import "time"

// Jitter is RFC 3550's interarrival jitter (§6.4.1), as iperf computes it:
// for consecutive packets in arrival order with transit times (arrival −
// send) S and R, D = R − S and J += (|D| − J)/16. The clocks of sender and
// receiver need not agree: a constant offset cancels in D.
type Jitter struct {
	j    float64 // ns
	prev time.Duration
	has  bool
}

// Add records the transit time of the next packet to arrive.
func (j *Jitter) Add(transit time.Duration) {
	if j.has {
		d := float64(transit - j.prev)
		if d < 0 {
			d = -d
		}
		j.j += (d - j.j) / 16
	}
	j.prev, j.has = transit, true
}

// MS is the current jitter in milliseconds.
func (j *Jitter) MS() float64 { return j.j / 1e6 }
