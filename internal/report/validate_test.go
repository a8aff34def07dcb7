package report

import (
	"math"
	"strings"
	"testing"
)

// TestOptionsValidate: options no report can mean are refused in the
// words of `cnperf report`'s flags, NaN included.
func TestOptionsValidate(t *testing.T) {
	with := func(f func(*Options)) Options { o := DefaultOptions(); f(&o); return o }
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{with(func(o *Options) { o.Bins = 0 }), "--bins 0: must be in 1..10000"},
		{with(func(o *Options) { o.Bins = MaxBins + 1 }), "--bins 10001"},
		{with(func(o *Options) { o.SplitK = math.NaN() }), "--split-k NaN: must be a number in (0, 1000]"},
		{with(func(o *Options) { o.SplitK = 0 }), "--split-k 0"},
		{with(func(o *Options) { o.Same = math.Inf(1) }), "--same +Inf: must be a percentage in [0, 100]"},
		{with(func(o *Options) { o.Same = -1 }), "--same -1"},
		{with(func(o *Options) { o.Smooth = 0 }), "--smooth 0: must be in 1..10000"},
		{with(func(o *Options) { o.SizeAxis = "cubic" }), `--size-axis "cubic": want auto, log, linear`},
	} {
		if err := tc.o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one with %q", tc.o, err, tc.want)
		}
	}
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("the defaults are refused: %v", err)
	}
	if DefaultOut([]string{"runs/a"}) != "runs/a/report.html" || DefaultOut([]string{"a", "b"}) != "report.html" {
		t.Errorf("DefaultOut: %q, %q", DefaultOut([]string{"runs/a"}), DefaultOut([]string{"a", "b"}))
	}
}
