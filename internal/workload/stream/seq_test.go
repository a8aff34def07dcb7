package stream

import (
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload/descriptors"
)

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

// TestPacer checks only stream's wiring of the shared pacer (udpseq tests
// the pacer itself): after a stall, stream allows a 4 ms burst.
func TestPacer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := newPacer(t0, 8_000_000, 1000) // 1 MB/s, 1000-byte writes: one per ms
	now := t0.Add(time.Second)
	n := 0
	for p.Wait(now) == 0 {
		p.Sent()
		n++
	}
	if n != 4 {
		t.Fatalf("burst after a stall: %d writes, want 4 (stream's 4 ms burst)", n)
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
		{"huge interval", func(c *Config) { c.Omit, c.Interval = time.Second, time.Duration(1<<63-1) }, "--interval"},
		{"most intervals", func(c *Config) { c.Omit, c.Duration, c.Interval = 1000*time.Second, 0, 10*time.Millisecond }, "--time"},
		{"intervals at the limit", func(c *Config) {
			c.Omit, c.Duration, c.Interval = 500*time.Second, 500*time.Second, 10*time.Millisecond
		}, ""},
		{"one interval too many", func(c *Config) {
			c.Omit, c.Duration, c.Interval = 500*time.Second, 500010*time.Millisecond, 10*time.Millisecond
		}, "100001 intervals"},
		{"rate above unlimited", func(c *Config) { c.Rate = descriptors.StreamUnlimitedRate + 1 }, "--bitrate"},
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
