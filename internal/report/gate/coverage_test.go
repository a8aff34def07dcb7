package gate

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
)

// TestRunsCoverage measures the intervals' coverage on real repeated runs
// of one spec, which a simulation cannot promise: CNPERF_COVERAGE_RUNS is
// a glob of run directories (bench/coverage.sh makes them). Every pair of
// runs is a comparison whose true change is 0: its interval must contain
// 0 in about 95 % of pairs. Every run's interval of a ratio should contain
// the mean of the other runs' ratios about as often (a little less, as
// that mean is itself off by a little). It logs, per metric, both
// coverages, the verdicts at --max-change 5 and the mean smallest
// detectable change; it fails only when it cannot read the runs.
func TestRunsCoverage(t *testing.T) {
	glob := os.Getenv("CNPERF_COVERAGE_RUNS")
	if glob == "" {
		t.Skip("set CNPERF_COVERAGE_RUNS to a glob of run directories of one spec")
	}
	dirs, _ := filepath.Glob(glob)
	sort.Strings(dirs)
	var runs []Run
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "run.json")); err != nil {
			continue
		}
		r, err := Load(d)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		runs = append(runs, r)
	}
	if len(runs) < 3 {
		t.Fatalf("%s: %d runs, want at least 3", glob, len(runs))
	}
	maxChange := 5.0
	type tally struct {
		pairs, covered, holds, broken, cannot int
		detect                                float64
		runs, runCovered                      int
		logs                                  []float64
	}
	by := map[string]*tally{}
	var keys []string
	get := func(k string) *tally {
		if by[k] == nil {
			by[k] = &tally{}
			keys = append(keys, k)
		}
		return by[k]
	}
	for j := range runs {
		for i := range j {
			rs, err := JudgeBaselines(runs[j], runs[i], maxChange)
			if err != nil {
				t.Fatal(err)
			}
			pools := changePools([]Run{runs[j], runs[i]})
			for _, ci := range runs[j].CIs {
				if !ci.Headline {
					continue
				}
				var old *analysis.RatioCI
				for k := range runs[i].CIs {
					if o := &runs[i].CIs[k]; o.Case == ci.Case && o.Mode == ci.Mode && o.Metric.Key == ci.Metric.Key {
						old = o
					}
				}
				if old == nil {
					continue
				}
				c := change(ci, []analysis.RatioCI{*old}, pools[poolKey{ci.Case, ci.Metric.Key}])
				tl := get(ci.Metric.Key)
				tl.pairs++
				if c.Known && c.Lo <= 0 && 0 <= c.Hi {
					tl.covered++
				}
				tl.detect += c.Detectable
			}
			for _, r := range rs {
				key := strings.SplitN(strings.SplitN(r.Name, ":", 2)[1], " ", 2)[0]
				switch r.Verdict {
				case Holds:
					get(key).holds++
				case Broken:
					get(key).broken++
				default:
					get(key).cannot++
				}
			}
		}
	}
	// Each run against the k runs before it together (--baseline given k
	// times): their spread adds the variance between runs.
	k := 3
	type multi struct{ n, covered, holds, broken, cannot int }
	byK := map[string]*multi{}
	for j := k; j < len(runs); j++ {
		rs, err := JudgeBaselines(runs[j], runs[j-k], maxChange, runs[j-k+1:j]...)
		if err != nil {
			t.Fatal(err)
		}
		pools := changePools(runs[j-k : j+1])
		for _, ci := range runs[j].CIs {
			if !ci.Headline {
				continue
			}
			var olds []analysis.RatioCI
			for _, o := range runs[j-k : j] {
				for _, oc := range o.CIs {
					if oc.Case == ci.Case && oc.Mode == ci.Mode && oc.Metric.Key == ci.Metric.Key {
						olds = append(olds, oc)
					}
				}
			}
			c := change(ci, olds, pools[poolKey{ci.Case, ci.Metric.Key}])
			m := byK[ci.Metric.Key]
			if m == nil {
				m = &multi{}
				byK[ci.Metric.Key] = m
			}
			m.n++
			if c.Known && c.Lo <= 0 && 0 <= c.Hi {
				m.covered++
			}
		}
		for _, r := range rs {
			key := strings.SplitN(strings.SplitN(r.Name, ":", 2)[1], " ", 2)[0]
			switch r.Verdict {
			case Holds:
				byK[key].holds++
			case Broken:
				byK[key].broken++
			default:
				byK[key].cannot++
			}
		}
	}
	// Each run's interval against the mean log ratio of the other runs.
	for i, r := range runs {
		for _, ci := range r.CIs {
			if !ci.Headline || !ci.Known() {
				continue
			}
			var sum float64
			var n int
			for j, o := range runs {
				for _, oc := range o.CIs {
					if j != i && oc.Case == ci.Case && oc.Mode == ci.Mode && oc.Metric.Key == ci.Metric.Key && oc.Ratio > 0 {
						sum += math.Log(oc.Ratio)
						n++
					}
				}
			}
			if n == 0 {
				continue
			}
			tl := get(ci.Metric.Key)
			tl.runs++
			if truth := math.Exp(sum / float64(n)); ci.Lo <= truth && truth <= ci.Hi {
				tl.runCovered++
			}
			tl.logs = append(tl.logs, math.Log(ci.Ratio))
		}
	}
	fmt.Printf("%d runs, %d pairs; --max-change %.0f\n", len(runs), len(runs)*(len(runs)-1)/2, maxChange)
	fmt.Printf("%-12s %18s %18s %7s %7s %12s %17s\n", "metric", "change covers 0", "run covers mean", "holds", "broken", "cannot tell", "detectable (mean)")
	for _, k := range keys {
		tl := by[k]
		if tl.pairs == 0 {
			continue
		}
		fmt.Printf("%-12s %8d/%-4d %4.0f%% %8d/%-4d %4.0f%% %7d %7d %12d %16.1f%%\n", k, tl.covered, tl.pairs, 100*float64(tl.covered)/float64(tl.pairs),
			tl.runCovered, tl.runs, 100*float64(tl.runCovered)/math.Max(float64(tl.runs), 1), tl.holds, tl.broken, tl.cannot, tl.detect/float64(tl.pairs))
	}
	if len(byK) > 0 {
		fmt.Printf("\neach run against the %d runs before it (--baseline %d times)\n%-12s %18s %7s %7s %12s\n", k, k, "metric", "change covers 0", "holds", "broken", "cannot tell")
		for _, key := range keys {
			if m := byK[key]; m != nil {
				fmt.Printf("%-12s %8d/%-4d %4.0f%% %7d %7d %12d\n", key, m.covered, m.n, 100*float64(m.covered)/float64(m.n), m.holds, m.broken, m.cannot)
			}
		}
	}
	// The variance components, averaged over the runs, and what they make
	// of a comparison of two runs of another size (docs/report.md).
	fmt.Println("\nvariance components of the log ratio (mean over runs): between lab instances, between cells")
	for _, k := range keys {
		var va, ve float64
		var n int
		for _, r := range runs {
			var ss []analysis.Spread
			for _, ci := range r.CIs {
				if ci.Metric.Key == k && ci.Headline {
					ss = append(ss, ci.Spread)
					if ci.Spread.DFW > 0 {
						ve += ci.Spread.MSW
						n++
					}
				}
			}
			va += analysis.Pool(ss...).Var
		}
		sa, se := math.Sqrt(va/float64(len(runs))), math.Sqrt(ve/math.Max(float64(n), 1))
		line := fmt.Sprintf("%-12s σ_instance %.3f  σ_cell %.3f  detectable change between two runs of n instances × m units each:", k, sa, se)
		for _, nm := range [][2]int{{3, 33}, {3, 100}, {5, 20}, {8, 13}, {8, 50}} {
			v := 2 * (sa*sa/float64(nm[0]) + se*se/float64(nm[0]*nm[1]))
			line += fmt.Sprintf("  %d×%d %.1f %%", nm[0], nm[1], 100*(math.Exp(2*math.Sqrt(v))-1))
		}
		fmt.Println(line)
	}
	// How far apart the runs' ratios really are, per mode and metric: the
	// spread the intervals should match.
	fmt.Println("\nratio between runs: SD of the log ratio over the runs (per mode), in %")
	for _, k := range keys {
		line := fmt.Sprintf("%-12s", k)
		for _, ci := range runs[0].CIs {
			if ci.Metric.Key != k || !ci.Headline {
				continue
			}
			var xs []float64
			for _, r := range runs {
				for _, oc := range r.CIs {
					if oc.Case == ci.Case && oc.Mode == ci.Mode && oc.Metric.Key == k && oc.Ratio > 0 {
						xs = append(xs, math.Log(oc.Ratio))
					}
				}
			}
			line += fmt.Sprintf("  %s %.1f", ci.Mode, 100*sd(xs))
		}
		fmt.Println(line)
	}
}

func sd(xs []float64) float64 {
	var m, s float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}
