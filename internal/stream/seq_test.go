package stream

import (
	"strings"
	"testing"
	"time"
)

func TestSeqTracker(t *testing.T) {
	tests := []struct {
		name                      string
		seqs                      []uint64
		sent                      uint64 // for Finish; 0: not called
		received, lost, ooo, want uint64
	}{
		{name: "in order", seqs: []uint64{0, 1, 2, 3}, received: 4, want: 4},
		{name: "gap and late", seqs: []uint64{0, 1, 2, 4, 3, 7}, received: 6, lost: 2, ooo: 1, want: 8},
		{name: "first lost", seqs: []uint64{1, 2}, received: 2, lost: 1, want: 3},
		{name: "swap", seqs: []uint64{1, 0, 3, 2}, received: 4, lost: 0, ooo: 2, want: 4},
		{name: "tail lost", seqs: []uint64{0, 1}, sent: 5, received: 2, lost: 3, want: 5},
		{name: "all lost", sent: 4, lost: 4, want: 4},
		{name: "big gap, late fill", seqs: []uint64{0, 10, 5}, received: 3, lost: 8, ooo: 1, want: 11},
		{name: "duplicate does not go negative", seqs: []uint64{0, 0, 0}, received: 3, ooo: 2, want: 1},
		{name: "finish below highest", seqs: []uint64{0, 1, 2}, sent: 2, received: 3, want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s SeqTracker
			for _, q := range tt.seqs {
				s.Add(q)
			}
			if tt.sent > 0 {
				s.Finish(tt.sent)
			}
			if s.Received() != tt.received || s.Lost() != tt.lost || s.OutOfOrder() != tt.ooo || s.Expected() != tt.want {
				t.Errorf("received %d lost %d ooo %d expected %d; want %d %d %d %d",
					s.Received(), s.Lost(), s.OutOfOrder(), s.Expected(), tt.received, tt.lost, tt.ooo, tt.want)
			}
		})
	}
}

func TestBoundaries(t *testing.T) {
	s := time.Second
	ms := time.Millisecond
	tests := []struct {
		omit, dur, iv time.Duration
		want          []time.Duration
		nOmit         int
	}{
		{0, 3 * s, s, []time.Duration{0, s, 2 * s, 3 * s}, 0},
		{0, 2500 * ms, s, []time.Duration{0, s, 2 * s, 2500 * ms}, 0},
		{1500 * ms, 2 * s, s, []time.Duration{0, s, 1500 * ms, 2500 * ms, 3500 * ms}, 2},
		{s, s, s, []time.Duration{0, s, 2 * s}, 1},
		{0, 500 * ms, s, []time.Duration{0, 500 * ms}, 0},
	}
	for _, tt := range tests {
		got := boundaries(tt.omit, tt.dur, tt.iv)
		if len(got) != len(tt.want) {
			t.Errorf("boundaries(%s, %s, %s) = %v, want %v", tt.omit, tt.dur, tt.iv, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("boundaries(%s, %s, %s) = %v, want %v", tt.omit, tt.dur, tt.iv, got, tt.want)
				break
			}
		}
		if n := omitBins(got, tt.omit); n != tt.nOmit {
			t.Errorf("omitBins(%v, %s) = %d, want %d", got, tt.omit, n, tt.nOmit)
		}
	}
}

func TestPacer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := newPacer(t0, 8_000_000, 1000) // 1 MB/s, 1000-byte writes: one per ms
	if d := p.wait(t0); d != 0 {
		t.Fatalf("first write waits %s, want 0", d)
	}
	p.sent(1000)
	if d := p.wait(t0); d < 900*time.Microsecond || d > 1100*time.Microsecond {
		t.Fatalf("second write waits %s, want ~1ms", d)
	}
	// After a long stall, credit is capped at the burst (4 ms = 4 writes).
	now := t0.Add(time.Second)
	n := 0
	for p.wait(now) == 0 {
		p.sent(1000)
		n++
	}
	if n != 4 {
		t.Fatalf("burst after a stall: %d writes, want 4", n)
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Addr: "x:1", Duration: time.Second}
	tests := []struct {
		name string
		mod  func(*Config)
		want string // substring of the error; "" for valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"udp max datagram", func(c *Config) { c.Protocol, c.Length = "udp", 65507 }, ""},
		{"udp datagram too big", func(c *Config) { c.Protocol, c.Length = "udp", 65508 }, "--length 65508"},
		{"udp datagram too small", func(c *Config) { c.Protocol, c.Length = "udp", 10 }, "--length 10"},
		{"zero duration", func(c *Config) { c.Duration = 0 }, "--time"},
		{"negative duration", func(c *Config) { c.Duration = -time.Second }, "--time"},
		{"negative omit", func(c *Config) { c.Omit = -time.Second }, "--omit"},
		{"unknown protocol", func(c *Config) { c.Protocol = "sctp" }, `--protocol "sctp"`},
		{"parallel 0 is default", func(c *Config) { c.Parallel = 0 }, ""},
		{"parallel negative", func(c *Config) { c.Parallel = -1 }, "--parallel -1"},
		{"parallel too many", func(c *Config) { c.Parallel = 129 }, "--parallel 129"},
		{"parallel max", func(c *Config) { c.Parallel = 128 }, ""},
		{"negative rate", func(c *Config) { c.Rate = -1 }, "--bitrate -1"},
		{"negative length", func(c *Config) { c.Length = -1 }, "--length -1"},
		{"tiny interval", func(c *Config) { c.Interval = time.Millisecond }, "--interval"},
		{"too many intervals", func(c *Config) { c.Duration, c.Interval = 24*time.Hour, 10*time.Millisecond }, "--interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.mod(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Validate() = nil, want an error with %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("Validate() = %q, want it to name %q", err, tt.want)
			}
		})
	}
}
