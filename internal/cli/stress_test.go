package cli

import (
	"testing"
	"time"
)

func TestStressBurning(t *testing.T) {
	s := time.Second
	tests := []struct {
		elapsed, on, off time.Duration
		want             bool
	}{
		{0, 0, 0, true},
		{90 * s, 0, 0, true},
		{0, 5 * s, 5 * s, true},
		{4900 * time.Millisecond, 5 * s, 5 * s, true},
		{5 * s, 5 * s, 5 * s, false},
		{9 * s, 5 * s, 5 * s, false},
		{10 * s, 5 * s, 5 * s, true},
		{21 * s, 2 * s, 8 * s, true},
		{23 * s, 2 * s, 8 * s, false},
	}
	for _, tc := range tests {
		if got := burning(tc.elapsed, tc.on, tc.off); got != tc.want {
			t.Errorf("burning(%s, on %s, off %s) = %v, want %v", tc.elapsed, tc.on, tc.off, got, tc.want)
		}
	}
}
