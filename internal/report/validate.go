package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds of the report's options. The comparisons are written so that NaN
// fails them too.
const (
	MaxBins   = 10000
	MaxSplitK = 1000 // the papers split at 3 windows; 1000 is past any size sweep
	MaxSame   = 100  // percent: at 100 every change counts as the same
)

// Validate refuses options no report can mean (NaN, infinities, negative
// or absurd values), naming the flag of `cnperf report` the user wrote.
func (o Options) Validate() error {
	switch {
	case o.Bins < 1 || o.Bins > MaxBins:
		return fmt.Errorf("--bins %d: must be in 1..%d", o.Bins, MaxBins)
	case !(o.SplitK > 0 && o.SplitK <= MaxSplitK):
		return fmt.Errorf("--split-k %g: must be a number in (0, %d]", o.SplitK, MaxSplitK)
	case !(o.Same >= 0 && o.Same <= MaxSame):
		return fmt.Errorf("--same %g: must be a percentage in [0, %d]", o.Same, MaxSame)
	case o.Smooth < 1 || o.Smooth > MaxBins:
		return fmt.Errorf("--smooth %d: must be in 1..%d", o.Smooth, MaxBins)
	case !slices.Contains(SizeAxes, o.SizeAxis):
		return fmt.Errorf("--size-axis %q: want %s", o.SizeAxis, strings.Join(SizeAxes, ", "))
	}
	return nil
}

// DefaultOut is where the report of the run directories goes when not
// told: beside the run for one run, else report.html here.
func DefaultOut(dirs []string) string {
	if len(dirs) == 1 {
		return filepath.Join(dirs[0], "report.html")
	}
	return "report.html"
}
