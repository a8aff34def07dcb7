// Package check judges a run against limits on what each mode may cost,
// or against an older run, with the 95 % intervals of the ratios
// (analysis.Spread): a limit holds or is broken only when the whole
// interval says so; otherwise the run cannot tell.
package gate

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/spec"
)

// Verdict is what a run says about one limit.
type Verdict int

const (
	Holds      Verdict = iota // the whole interval is within the limit
	Broken                    // the whole interval is beyond it
	CannotTell                // the interval straddles the limit, or there is none
)

func (v Verdict) String() string {
	return [...]string{"holds", "BROKEN", "cannot tell"}[v]
}

// Limit is MODE:METRIC=PCT: the mode may cost at most PCT % of the
// metric against the reference.
type Limit struct {
	Mode, Metric string
	MaxCost      float64
}

func (l Limit) String() string {
	return fmt.Sprintf("%s:%s=%s", short(l.Mode), short(l.Metric), strconv.FormatFloat(l.MaxCost, 'g', -1, 64))
}

// short cuts a name the user wrote to maxQuote bytes for messages: a mode
// or metric of megabytes is no mode or metric, and its line stays short.
func short(s string) string {
	if len(s) <= maxQuote {
		return s
	}
	return strings.ToValidUTF8(s[:maxQuote], "") + "…"
}

// ParseLimit reads MODE:METRIC=PCT; PCT is a finite number, negative to
// demand a gain. Its errors quote what they refuse shortened.
func ParseLimit(s string) (Limit, error) {
	key, pct, ok := strings.Cut(s, "=")
	mode, metric, ok2 := strings.Cut(key, ":")
	if !ok || !ok2 || mode == "" || metric == "" {
		return Limit{}, fmt.Errorf("limit %s: want MODE:METRIC=PCT, e.g. bridge:transfer=25", quote(s))
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(pct), "%"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Limit{}, fmt.Errorf("limit %s: %s is not a percentage", quote(s), quote(pct))
	}
	return Limit{Mode: mode, Metric: metric, MaxCost: v}, nil
}

// quote shows a value the user wrote in an error, shortened: a limits
// file may hold a value of megabytes.
func quote(s string) string { return record.Quote(s, maxQuote) }

// Bounds of a limits file: as large as a spec may be, and an error names
// at most maxErrors of its problems, each value at most maxQuote bytes.
const (
	MaxFileBytes = spec.MaxSpecBytes
	maxErrors    = 3
	maxQuote     = 64
)

// LimitsFile is a limits file: the same limits as the flags.
type LimitsFile struct {
	MaxCost   []string `yaml:"max_cost"`   // MODE:METRIC=PCT
	MaxChange *float64 `yaml:"max_change"` // with --baseline
}

// ReadLimits reads a limits file strictly: unknown keys are an error. A
// file larger than MaxFileBytes, or not a regular file (a named pipe, a
// device), is refused before it is read.
func ReadLimits(path string) ([]Limit, *float64, error) {
	b, err := record.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("limits file: %w", err)
	}
	var f LimitsFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("limits file %s: %s", path, shorten(spec.YAMLMessage(err, b)))
	}
	var out []Limit
	for _, s := range f.MaxCost {
		l, err := ParseLimit(s)
		if err != nil {
			return nil, nil, fmt.Errorf("limits file %s: %w", path, err)
		}
		out = append(out, l)
	}
	if m := f.MaxChange; m != nil {
		if err := CheckChange("max_change", *m); err != nil {
			return nil, nil, fmt.Errorf("limits file %s: %w", path, err)
		}
	}
	return out, f.MaxChange, nil
}

// shorten cuts a YAML error (spec.YAMLMessage: one line, the first few
// wrong values with their fields, a syntax error's line, an unknown key
// by name) to a few values' length: an unknown key of a megabyte is
// quoted whole.
func shorten(line string) string {
	if len(line) > 4*maxQuote*maxErrors {
		line = strings.ToValidUTF8(line[:4*maxQuote*maxErrors], "") + "…"
	}
	return line
}

// Result is one limit judged on one ratio.
type Result struct {
	Name    string // the limit and, for a socket case, the case
	Verdict Verdict
	Line    string // what to print
}

// BadInput is what a run cannot be judged against: not a run, a mode or
// metric it lacks.
type BadInput struct{ msg string }

func (b BadInput) Error() string { return b.msg }

func badInput(format string, a ...any) error { return BadInput{fmt.Sprintf(format, a...)} }

// Run is a run with its ratios to the reference and their intervals.
type Run struct {
	Dir       string
	Reference string // in the tables' words: a series, or the reference mode in each series' own place
	CIs       []analysis.RatioCI
	Notes     []string // what reading the run skipped, one line each
	modes     []string
	refs      []string // the series that are a reference (report.RunReference)
	run       report.Run
}

// Load reads a run and computes its intervals; a directory that is not a
// readable run is bad input.
func Load(dir string) (Run, error) {
	runs, notes := report.Load([]string{dir})
	if len(runs) == 0 {
		return Run{}, badInput("%s", strings.Join(notes, "; "))
	}
	r := runs[0]
	label, refs := report.RunReference(r)
	cis := report.RunIntervals(r, r.Meta.Spec.ReferenceKey(), report.DefaultOptions().Same)
	return Run{Dir: dir, Reference: label, CIs: cis, Notes: notes, modes: r.Meta.SeriesKeys(), refs: refs, run: r}, nil
}

// JudgeLimits judges every limit on the run: one result per limit, or per case
// of a socket run that measured the metric. A mode the run lacks, the
// reference itself, or a metric no case of the run measured is bad input.
func JudgeLimits(run Run, limits []Limit) ([]Result, error) {
	var out []Result
	for _, l := range limits {
		if !slices.Contains(run.modes, l.Mode) {
			return nil, badInput("%s: %s has no mode %s (it has %s)", l, run.Dir, quote(l.Mode), strings.Join(run.modes, ", "))
		}
		if slices.Contains(run.refs, l.Mode) {
			return nil, badInput("%s: %s is the reference: it costs nothing against itself", l, quote(l.Mode))
		}
		var found bool
		for _, ci := range run.CIs {
			if ci.Mode != l.Mode || ci.Metric.Key != l.Metric {
				continue
			}
			found = true
			out = append(out, judge(l.String(), ci, l.MaxCost, "cost"))
		}
		if !found {
			if keys := metricKeys(run.CIs); len(keys) > 0 {
				return nil, badInput("%s: %s has no metric %s against %s (it has %s)", l, run.Dir, quote(l.Metric), run.Reference, strings.Join(keys, ", "))
			}
			return nil, badInput("%s: %s has no ratio against its reference %s: %s", l, run.Dir, quote(run.Reference), noRatios(run))
		}
	}
	return out, nil
}

// noRatios says why a run has no ratio at all: its reference is no series
// of it, or was not measured.
func noRatios(run Run) string {
	if !slices.ContainsFunc(run.refs, func(r string) bool { return slices.Contains(run.modes, r) }) {
		return "run.json lists no series of that name (it lists " + strings.Join(run.modes, ", ") + ")"
	}
	return "no sample of the reference was measured"
}

// metricKeys lists the metrics the run has intervals for.
func metricKeys(cis []analysis.RatioCI) []string {
	var keys []string
	for _, ci := range cis {
		if !slices.Contains(keys, ci.Metric.Key) {
			keys = append(keys, ci.Metric.Key)
		}
	}
	return keys
}

// judge compares a cost interval with a limit.
func judge(name string, ci analysis.RatioCI, limit float64, word string) Result {
	cost, lo, hi := ci.Cost()
	return verdict(name, ci.Case, cost, lo, hi, ci.Known(), limit, word)
}

func verdict(name, kase string, cost, lo, hi float64, known bool, limit float64, word string) Result {
	if kase != "" {
		name += " (" + kase + ")"
	}
	r := Result{Name: name, Verdict: CannotTell}
	switch {
	case !known:
		r.Line = fmt.Sprintf("%-11s %s: %s %s %%, no interval (fewer than 2 paired units) to hold against the limit %s %%", r.Verdict, name, word, num(cost), num(limit))
		return r
	case hi <= limit:
		r.Verdict = Holds
	case lo > limit:
		r.Verdict = Broken
	}
	rel := map[Verdict]string{Holds: "within", Broken: "beyond", CannotTell: "straddles"}[r.Verdict]
	r.Line = fmt.Sprintf("%-11s %s: %s %s %%, 95 %% CI [%s %%, %s %%] %s the limit %s %%", r.Verdict, name, word, num(cost), num(lo), num(hi), rel, num(limit))
	return r
}

// num shows a percentage with one decimal.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// JudgeBaselines compares each headline ratio of run with the same ratio of old
// (and of more baseline runs: then with their mean): how much worse (or
// better) the new ratio is, in percent, with the 95 % interval of the
// change, judged against maxChange. The change's interval comes from the
// runs' units (analysis.CompareRuns): the runs' variances add, and the lab
// instances' variance is pooled over every mode of every run. With two or
// more baselines their spread also gives the variance between runs, which
// no run's units can see (analysis.CompareToRuns). Ratios the new run
// shares with no baseline are left out; none in common is bad input.
func JudgeBaselines(run, old Run, maxChange float64, more ...Run) ([]Result, error) {
	olds := append([]Run{old}, more...)
	pools := changePools(append([]Run{run}, olds...))
	var out []Result
	for _, ci := range run.CIs {
		if !ci.Headline {
			continue
		}
		var base []analysis.RatioCI
		for _, o := range olds {
			i := slices.IndexFunc(o.CIs, func(o analysis.RatioCI) bool {
				return o.Case == ci.Case && o.Mode == ci.Mode && o.Metric.Key == ci.Metric.Key
			})
			if i >= 0 {
				base = append(base, o.CIs[i])
			}
		}
		if len(base) == 0 {
			continue
		}
		name := fmt.Sprintf("%s:%s", ci.Mode, ci.Metric.Key)
		c := change(ci, base, pools[poolKey{ci.Case, ci.Metric.Key}])
		out = append(out, judgeChange(name, ci.Case, c, maxChange))
	}
	if len(out) == 0 {
		return nil, badInput("%s and %s share no mode and metric against the reference", run.Dir, old.Dir)
	}
	return out, nil
}

// poolKey is the set of ratios that share an instances' variance: one
// metric (of one socket case).
type poolKey struct{ kase, metric string }

// changePools pools the instances' variance of each metric over every
// mode of every run.
func changePools(runs []Run) map[poolKey]analysis.Between {
	spreads := map[poolKey][]analysis.Spread{}
	for _, r := range runs {
		for _, ci := range r.CIs {
			k := poolKey{ci.Case, ci.Metric.Key}
			spreads[k] = append(spreads[k], ci.Spread)
		}
	}
	out := map[poolKey]analysis.Between{}
	for k, ss := range spreads {
		out[k] = analysis.Pool(ss...)
	}
	return out
}

// Change is how much worse a ratio got than in the baseline, in percent
// of the old ratio (negative: better), with its 95 % interval, and the
// smallest change the runs could have told from none.
type Change struct {
	Worse, Lo, Hi float64
	Detectable    float64 // percent: a change this large puts its interval past 0
	Known         bool
	Baselines     int  // runs the new one was compared with
	BetweenRuns   bool // their spread gave the variance between runs
	// Unbounded: the interval has no finite bounds, as when two baselines
	// that differ much estimate the spread between runs with 1 degree of
	// freedom (Student's t below 1 degree is infinite).
	Unbounded bool
}

// change compares a ratio with its baselines: the point is the ratio the
// tables show over the (geometric) mean of the baselines', the interval's
// half-width that of the runs' units, carried over as a factor as Around
// does, and with several baselines their spread between runs.
func change(now analysis.RatioCI, olds []analysis.RatioCI, pool analysis.Between) Change {
	var logs, vars []float64
	var spreads []analysis.Spread
	for _, o := range olds {
		logs = append(logs, math.Log(o.Ratio))
		spreads = append(spreads, o.Spread)
		v, _, _ := o.Spread.Variance(pool)
		vars = append(vars, v)
	}
	var cmp analysis.ChangeCI
	c := Change{Baselines: len(olds)}
	if len(olds) == 1 {
		cmp = analysis.CompareRuns(now.Spread, olds[0].Spread, pool)
		cmp.Log = math.Log(now.Ratio) - logs[0]
	} else {
		br := analysis.EstimateBetweenRuns(logs, vars)
		c.BetweenRuns = br.DF > 0
		cmp = analysis.CompareToRuns(math.Log(now.Ratio), now.Spread, logs, spreads, pool, br)
	}
	d := cmp.Log
	c.Known = cmp.Known && !bad(d)
	c.Unbounded = c.Known && bad(cmp.Half)
	l, u := d-cmp.Half, d+cmp.Half
	c.Detectable = (math.Exp(cmp.Half) - 1) * 100
	if now.Metric.HigherIsBetter {
		c.Worse, c.Lo, c.Hi = (1-math.Exp(d))*100, (1-math.Exp(u))*100, (1-math.Exp(l))*100
	} else {
		c.Worse, c.Lo, c.Hi = (math.Exp(d)-1)*100, (math.Exp(l)-1)*100, (math.Exp(u)-1)*100
	}
	return c
}

func bad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// judgeChange holds a change against the largest change allowed, in
// words a person reads: "1.2 % better than the baseline", never "worse
// by -1.2 %".
func judgeChange(name, kase string, c Change, maxChange float64) Result {
	if kase != "" {
		name += " (" + kase + ")"
	}
	r := Result{Name: name, Verdict: CannotTell}
	baseline := "the baseline"
	if c.Baselines > 1 {
		baseline = fmt.Sprintf("the %d baselines", c.Baselines)
	}
	point := amount(c.Worse) + " than " + baseline
	if amount(c.Worse) == "0.0 %" {
		point = "no change from " + baseline
	}
	limit := "the limit of " + amount(maxChange)
	if !c.Known {
		r.Line = fmt.Sprintf("%-11s %s: %s; no interval (fewer than 2 paired units in a run) to hold against %s", r.Verdict, name, point, limit)
		return r
	}
	if c.Unbounded {
		r.Line = fmt.Sprintf("%-11s %s: %s; no bounded interval to hold against %s: the %d baselines differ by more than their own intervals allow, and so few cannot say by how much (give 3 or more)", r.Verdict, name, point, limit, c.Baselines)
		return r
	}
	switch {
	case c.Hi <= maxChange:
		r.Verdict = Holds
	case c.Lo > maxChange:
		r.Verdict = Broken
	}
	rel := map[Verdict]string{Holds: "within", Broken: "beyond", CannotTell: "straddles"}[r.Verdict]
	r.Line = fmt.Sprintf("%-11s %s: %s, 95 %% CI %s to %s: %s %s; could detect changes of %s %% or more",
		r.Verdict, name, point, amount(c.Lo), amount(c.Hi), rel, limit, num(c.Detectable))
	return r
}

// amount says a change in percent, positive for worse, in words: "4.6 %
// better" for -4.6, "4.6 % worse" for 4.6, "0.0 %" when it rounds to 0.
func amount(v float64) string {
	switch t := num(math.Abs(v)); {
	case t == "0.0":
		return "0.0 %"
	case v < 0:
		return t + " % better"
	default:
		return t + " % worse"
	}
}

// Worst is the verdict of all results: broken if any is, else cannot tell
// if any cannot, else holds.
func Worst(rs []Result) Verdict {
	w := Holds
	for _, r := range rs {
		if r.Verdict == Broken {
			return Broken
		}
		if r.Verdict == CannotTell {
			w = CannotTell
		}
	}
	return w
}
