package stress

import (
	"strings"
	"testing"
	"time"
)

func TestBurning(t *testing.T) {
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

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Share: 0.5, Threads: 1}, ""},
		{Config{Share: 0.5, Threads: 2, On: time.Second, Off: time.Second}, ""},
		{Config{Share: 1, Threads: 1}, "--share 1: want (0, 1)"},
		{Config{Share: 0, Threads: 1}, "--share 0"},
		{Config{Share: 0.5, Threads: 0}, "--threads 0: want 1..1024"},
		{Config{Share: 0.5, Threads: MaxThreads + 1}, "--threads 1025"},
		{Config{Share: 0.5, Threads: 1, On: time.Second}, "--on 1s --off 0s: give both, > 0, or neither"},
		{Config{Share: 0.5, Threads: 1, On: -time.Second, Off: -time.Second}, "--on -1s"},
	} {
		err := tc.c.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: err = %v, want %q", tc.c, err, tc.want)
		}
	}
}
