package analysis_test

import (
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// TestFailedSizes: a size whose every request failed (an error, a code
// other than 200, a short body) is named per series; a size with one
// success among failures is not.
func TestFailedSizes(t *testing.T) {
	bad := func(mode string, size int, code int, errText string) record.Sample {
		return record.Sample{Workload: "pingpong", Mode: mode, Size: size, Code: code, Error: errText}
	}
	samples := map[string][]record.Sample{
		"bare": {ok("bare", 100, 1, 1), ok("bare", 200, 1, 1)},
		"overlay": {
			ok("overlay", 100, 1, 1), bad("overlay", 100, 0, "timeout"), // one success: not failed
			bad("overlay", 900, 0, "connection reset"), bad("overlay", 900, 503, ""), // every repetition failed
			bad("overlay", 300, 0, "timeout"), // the only one
			{Workload: "pingpong", Mode: "overlay", Size: 50, Code: 200, Length: 3, DurationMS: 1}, // a short body
		},
	}
	d, _ := analysis.NewDataset([]string{"bare", "overlay"}, samples, "bare")
	tests := []struct {
		series string
		want   []int
	}{
		{"bare", nil},
		{"overlay", []int{50, 300, 900}},
	}
	for _, tc := range tests {
		if got := d.FailedSizes[tc.series]; !slices.Equal(got, tc.want) {
			t.Errorf("%s: FailedSizes %v, want %v", tc.series, got, tc.want)
		}
	}
	set := analysis.NewPingPongSet(append(samples["bare"], samples["overlay"]...), nil, []string{"bare", "overlay"})
	for _, r := range set.Rows("bare") {
		if r.Mode == "overlay" && !slices.Equal(r.FailedSizes, []int{50, 300, 900}) {
			t.Errorf("overlay row: FailedSizes %v", r.FailedSizes)
		}
	}
}
