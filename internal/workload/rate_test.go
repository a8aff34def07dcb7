package workload

import "testing"

func TestRates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{{"0", 0}, {"10M", 10e6}, {"1.5G", 1.5e9}, {"100k", 100e3}, {"1T", 1e12}, {"1000000", 1e6}, {"0.5", 1}} {
		if got, err := parseRate(tc.in); err != nil || got != tc.want {
			t.Errorf("parseRate(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}
