package gate

import (
	"errors"
	"fmt"
	"os"
)

// DefaultMaxChange is how much worse than the baselines a ratio may get,
// in percent, when neither the command nor a limits file says.
const DefaultMaxChange = 5.0

// Criteria is what a run is judged against.
type Criteria struct {
	Limits    []Limit
	Baselines []string // older runs' directories
	MaxChange float64  // with Baselines: how much worse a ratio may get, in %
}

// Gather collects the criteria of a judgement: the limits of a limits
// file (file; "" for none), then those given as MODE:METRIC=PCT (costs, as
// --max-cost takes them), the baselines, and the largest change allowed:
// maxChange when given, else the file's max_change, else
// DefaultMaxChange. Nothing to judge the run against is bad input.
func Gather(costs []string, file string, baselines []string, maxChange *float64) (Criteria, error) {
	c := Criteria{Baselines: baselines, MaxChange: DefaultMaxChange}
	if file != "" {
		l, change, err := ReadLimits(file)
		if err != nil {
			return Criteria{}, err
		}
		c.Limits = l
		if change != nil {
			c.MaxChange = *change
		}
	}
	for _, s := range costs {
		l, err := ParseLimit(s)
		if err != nil {
			return Criteria{}, err
		}
		c.Limits = append(c.Limits, l)
	}
	if len(c.Limits) == 0 && len(baselines) == 0 {
		return Criteria{}, errors.New("nothing to check: give --max-cost, --limits or --baseline")
	}
	if maxChange != nil {
		if err := CheckChange("--max-change", *maxChange); err != nil {
			return Criteria{}, err
		}
		c.MaxChange = *maxChange
	}
	return c, nil
}

// CheckChange refuses a largest change (--max-change, a limits file's
// max_change, named by what) that is no finite percentage: NaN holds
// against nothing and an infinite limit against everything. A negative
// one is a limit too: it demands a gain.
func CheckChange(what string, pct float64) error {
	if bad(pct) {
		return fmt.Errorf("%s %v: want a finite percentage, e.g. 5", what, pct)
	}
	return nil
}

// Judge judges the run in dir by c: its limits, then, with baselines, its
// change from them; results resting on a run measured on a busy machine
// cannot tell (Disturbed). note hears what reading a run skipped: the
// run's before its limits are judged, the baselines' once all are read.
// Every error is bad input: a directory that is no readable run, a mode
// or metric the run lacks, baselines that share nothing with it.
func Judge(dir string, c Criteria, note func(string)) ([]Result, error) {
	run, err := Load(dir)
	if err != nil {
		return nil, err
	}
	for _, n := range run.Notes {
		note(n)
	}
	results, err := JudgeLimits(run, c.Limits)
	if err != nil {
		return nil, err
	}
	if results, err = Disturbed(results, dir); err != nil {
		return nil, err
	}
	if len(c.Baselines) == 0 {
		return results, nil
	}
	var olds []Run
	for _, b := range c.Baselines {
		old, err := Load(b)
		if err != nil {
			return nil, err
		}
		olds = append(olds, old)
	}
	for _, old := range olds {
		for _, n := range old.Notes {
			note(n)
		}
	}
	more, err := JudgeBaselines(run, olds[0], c.MaxChange, olds[1:]...)
	if err != nil {
		return nil, err
	}
	more, err = Disturbed(more, append([]string{dir}, c.Baselines...)...)
	return append(results, more...), err
}

// Tally is the verdict of all results (Worst) and, unless every one
// holds, the sentence that says how many did not: of what was judged
// ("limits", "claims"), broken the word for those broken ("broken",
// "differ").
func Tally(rs []Result, of, broken string) (Verdict, string) {
	n := map[Verdict]int{}
	for _, r := range rs {
		n[r.Verdict]++
	}
	switch w := Worst(rs); w {
	case Broken:
		return w, fmt.Sprintf("%d of %d %s %s", n[Broken], len(rs), of, broken)
	case CannotTell:
		return w, fmt.Sprintf("the run cannot tell %d of %d %s", n[CannotTell], len(rs), of)
	default:
		return w, ""
	}
}

// WriteJUnitFile writes the results as JUnit XML (WriteJUnit) to path.
func WriteJUnitFile(path, run string, rs []Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteJUnit(f, run, rs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
