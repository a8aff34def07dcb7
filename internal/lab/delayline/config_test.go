package delayline

import (
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	good := Config{Local: "zl", Remote: "zr", Delay: 20 * time.Millisecond, Jitter: time.Millisecond, LossPercent: 1, QueueBytes: 1 << 20, Stats: "/run/x.json"}
	c, err := ParseConfig(good.JSON())
	if err != nil || c != good {
		t.Fatalf("round trip: %+v, %v", c, err)
	}
	for _, tc := range []struct {
		in, want string
	}{
		{`{"local":"a","remote":"b","queue_bytes":1048576,"extra":1}`, "unknown field"},
		{`{"local":"a","remote":"b","queue_bytes":1048576} {}`, "more than one"},
		{`{"local":"a b","remote":"b","queue_bytes":1048576}`, `local "a b"`},
		{`{"local":"a","remote":"a","queue_bytes":1048576}`, `remote "a"`},
		{`{"local":"a","remote":"b","queue_bytes":10}`, "queue_bytes 10"},
		{`{"local":"a","remote":"b","queue_bytes":1048576,"delay_ns":-1}`, "delay_ns -1"},
		{`{"local":"a","remote":"b","queue_bytes":1048576,"delay_ns":3600000000001}`, "delay_ns 3600000000001"},
		{`{"local":"a","remote":"b","queue_bytes":1048576,"delay_ns":5,"jitter_ns":6}`, "jitter_ns 6"},
		{`{"local":"a","remote":"b","queue_bytes":1048576,"loss_percent":100}`, "loss_percent 100"},
	} {
		if _, err := ParseConfig(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%s) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

// FuzzParseConfig: whatever comes on the command line, a configuration
// that parses is valid and survives its own round trip.
func FuzzParseConfig(f *testing.F) {
	f.Add(Config{Local: "zl", Remote: "zr", Delay: time.Millisecond, QueueBytes: 1 << 20}.JSON())
	f.Add(`{"local":"a","remote":"b","queue_bytes":1e300}`)
	f.Add(`{"loss_percent":"NaN"}`)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConfig(s)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed an invalid configuration %+v: %v", c, err)
		}
		back, err := ParseConfig(c.JSON())
		if err != nil || back != c {
			t.Fatalf("round trip of %+v: %+v, %v", c, back, err)
		}
	})
}
