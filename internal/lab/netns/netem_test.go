package netns

import (
	"strings"
	"testing"
	"time"
)

// TestNetemArgs: netem's parameters as tc takes them, jitter and loss
// only when set.
func TestNetemArgs(t *testing.T) {
	for _, tc := range []struct {
		limit         int
		delay, jitter time.Duration
		loss          float64
		want          string
	}{
		{1000, 5 * time.Millisecond, 0, 0, "limit 1000 delay 5000us"},
		{2000, 110 * time.Millisecond, 2 * time.Millisecond, 0.5, "limit 2000 delay 110000us 2000us loss 0.5%"},
		{1000, 0, 0, 1, "limit 1000 delay 0us loss 1%"},
	} {
		if got := strings.Join(netemArgs(tc.limit, tc.delay, tc.jitter, tc.loss), " "); got != tc.want {
			t.Errorf("netemArgs(%d, %s, %s, %g) = %q, want %q", tc.limit, tc.delay, tc.jitter, tc.loss, got, tc.want)
		}
	}
}
