package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
)

// Agreement is what a run says about one of a paper's claims (spec.Claim).
type Agreement int

const (
	Agrees    Agreement = iota // the ratio's whole 95 % interval lies within the claim's range
	Differs                    // it lies wholly outside
	Undecided                  // it straddles a bound, or the run gives none
)

func (a Agreement) String() string { return [...]string{"agrees", "DIFFERS", "cannot tell"}[a] }

// Finding is one claim judged on one run: the ratio of its series to what
// it is compared with, with its 95 % interval, and the verdict.
type Finding struct {
	Claim spec.Claim // Against resolved (ResolveClaims)
	Case  string     // a socket test's case; "" ping-pong
	analysis.Interval
	Verdict Agreement
	// More is, when the run cannot tell, about how many more paired units
	// would, were the ratio as measured; 0 when none would (the ratio sits
	// on a bound, or there is no interval).
	More int
	// Explained is the verdict on the claim's explanation, for a claim
	// that differs: measured, refuted, untested or not testable here.
	Explained string
}

// ResolveClaims returns s's claims, each with the series it is compared
// with named (spec.AgainstKey): claims read from one spec may be judged
// on a run of another, an imported one.
func ResolveClaims(s spec.Spec) []spec.Claim {
	out := slices.Clone(s.Claims)
	for i := range out {
		out[i].Against = s.AgainstKey(out[i])
	}
	return out
}

// Findings judges resolved claims on run (one finding per claim, or per
// case of its socket test), same as Options.Same. A claim whose series,
// metric or test the run lacks is bad input, named as claims[i].FIELD.
func Findings(run Run, claims []spec.Claim, same float64) ([]Finding, error) {
	ms, err := Measure(run, claims, same)
	if err != nil {
		return nil, err
	}
	out := make([]Finding, len(ms))
	for i, m := range ms {
		out[i] = m.Judge()
	}
	return out, nil
}

// Measured is a claim's figure on one run before it is judged: what a
// stored summary of the run's findings keeps (StoredFindings), so that the
// claim's range may change and the run be judged again without its samples.
type Measured struct {
	Claim spec.Claim // Against resolved
	Case  string     // a socket test's case; "" ping-pong
	analysis.Interval
	// Variant is the same ratio on the series of the claim's
	// explain.variant (the case alike, else its first); nil when the claim
	// names none or the run lacks its series.
	Variant *analysis.Interval
}

// Measure gives each resolved claim's ratios on run, and those of its
// explanation's variant, as Findings judges them.
func Measure(run Run, claims []spec.Claim, same float64) ([]Measured, error) {
	var out []Measured
	for i, c := range claims {
		fs, err := judgeClaim(run, c, same)
		if err != nil {
			return nil, fmt.Errorf("claims[%d].%w", i, err)
		}
		var vs []Finding
		if c.Explain != nil && c.Explain.Variant != "" {
			vs, _ = judgeClaim(run, onVariant(c), same) // none: the explanation is untested
		}
		for _, f := range fs {
			m := Measured{Claim: c, Case: f.Case, Interval: f.Interval}
			if len(vs) > 0 {
				m.Variant = &vs[max(0, slices.IndexFunc(vs, func(v Finding) bool { return v.Case == f.Case }))].Interval
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// Judge holds the ratio against the claim's range, and a difference's
// explanation against the variant's ratio.
func (m Measured) Judge() Finding {
	f := agreement(m.Claim, m.Case, m.Interval)
	if f.Verdict == Differs && m.Claim.Explain != nil {
		f.Explained = m.explain()
	}
	return f
}

// judgeClaim is one claim's findings.
func judgeClaim(run Run, c spec.Claim, same float64) ([]Finding, error) {
	keys := run.Meta.SeriesKeys()
	for _, k := range []struct{ field, key string }{{"series", c.Series}, {"against", c.Against}} {
		if !slices.Contains(keys, k.key) {
			return nil, fmt.Errorf("%s %s: %s has no such series (it has %s)", k.field, record.Quote(k.key, 64), run.Dir, strings.Join(keys, ", "))
		}
	}
	var cases []analysis.Case
	for _, v := range run.Views() {
		switch {
		case c.Test == "" && v.Sweeps():
			samples := v.PingPong
			if c.Sizes != nil {
				samples = slices.DeleteFunc(slices.Clone(samples), func(s record.Sample) bool { return s.Size < c.Sizes[0] || s.Size > c.Sizes[1] })
			}
			cases = append(cases, analysis.NewSweep(samples, Cells(v.Meta), []string{c.Against, c.Series}).Case(v.Meta.Spec.Sweep()))
		case c.Test != "" && !v.Sweeps():
			test := slices.IndexFunc(v.Meta.Spec.Tests, func(t workload.Test) bool { return t.Label() == c.Test })
			for _, k := range RunCases(v, c.Against, same) {
				if k.Test == test {
					cases = append(cases, k)
				}
			}
		}
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("test %s: %s measured no case of it", record.Quote(c.Test, 64), run.Dir)
	}
	var out []Finding
	var metrics []string
	for _, ci := range analysis.Intervals(cases, c.Against) {
		if !slices.Contains(metrics, ci.Metric.Key) {
			metrics = append(metrics, ci.Metric.Key)
		}
		if ci.Mode == c.Series && ci.Metric.Key == c.Metric {
			out = append(out, agreement(c, ci.Case, ci.Interval))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("metric %s: no ratio of %s to %s on it in %s (metrics: %s)", record.Quote(c.Metric, 64), c.Series, c.Against, run.Dir, strings.Join(metrics, ", "))
	}
	return out, nil
}

// agreement holds a ratio's interval against the claim's range.
func agreement(c spec.Claim, kase string, iv analysis.Interval) Finding {
	f := Finding{Claim: c, Case: kase, Interval: iv, Verdict: Undecided}
	lo, hi := c.Bounds()
	switch {
	case !iv.Known():
		return f
	case iv.Lo >= lo && iv.Hi <= hi:
		f.Verdict = Agrees
	case iv.Hi < lo || iv.Lo > hi:
		f.Verdict = Differs
	default:
		// The interval narrows as 1/√units: the units it would take to
		// clear the nearest bound the point is away from.
		p := math.Log(iv.Ratio)
		half := max(math.Log(iv.Hi)-p, p-math.Log(iv.Lo))
		d := math.Inf(1)
		for _, b := range []float64{lo, hi} {
			if b > 0 && !math.IsInf(b, 0) {
				d = min(d, math.Abs(p-math.Log(b)))
			}
		}
		if need := float64(iv.Units) * (half / d) * (half / d); d > 0 && need < 1e6 {
			f.More = max(1, int(math.Ceil(need))-iv.Units)
		}
	}
	return f
}

// onVariant is the claim on the series of its explanation's variant.
func onVariant(c spec.Claim) spec.Claim {
	on := func(key string) string {
		base, _, _ := strings.Cut(key, "/")
		return base + "/" + c.Explain.Variant
	}
	c.Series, c.Against, c.Explain = on(c.Series), on(c.Against), nil
	return c
}

// explain judges a differing claim's explanation: the same claim on the
// series of the variant that sets the paper's value.
func (m Measured) explain() string {
	e := m.Claim.Explain
	if e.Untestable != "" {
		return "not testable here (" + e.Untestable + "): " + e.Because
	}
	if m.Variant == nil {
		return fmt.Sprintf("untested: %s; this run has no %s (run variant %s)", e.Because, onVariant(m.Claim).Series, e.Variant)
	}
	v := agreement(m.Claim, m.Case, *m.Variant)
	word := map[Agreement]string{Agrees: "measured", Differs: "refuted", Undecided: "untested"}[v.Verdict]
	return fmt.Sprintf("%s: %s; on %s %s (%s)", word, e.Because, e.Variant, RatioText(v.Interval), v.Verdict)
}

// RatioText is "0.84 [0.83, 0.85]", the point without an interval when
// there is none.
func RatioText(iv analysis.Interval) string {
	if !iv.Known() {
		return fmt.Sprintf("%.3g (%s)", iv.Ratio, tooFew(iv))
	}
	return fmt.Sprintf("%.3g %s", iv.Ratio, ciText(iv, 3))
}

// RangeText is the claim's range: "0.80–0.90", "≥ 0.95".
func RangeText(c spec.Claim) string {
	lo, hi := c.Bounds()
	switch {
	case math.IsInf(hi, 1):
		return fmt.Sprintf("≥ %.3g", lo)
	case math.IsInf(lo, -1):
		return fmt.Sprintf("≤ %.3g", hi)
	}
	return fmt.Sprintf("%.3g–%.3g", lo, hi)
}

// Line is a finding in one line, as `cnperf check --claims` prints it.
func (f Finding) Line() string {
	s := fmt.Sprintf("%-11s %s: %s over %s, %s %s, the paper's %s (%s)", f.Verdict, f.Name(), f.Claim.Series, f.Claim.Against, f.Claim.Metric,
		RatioText(f.Interval), RangeText(f.Claim), f.Claim.Source)
	if f.More > 0 {
		s += fmt.Sprintf("; about %d more units would tell", f.More)
	}
	if f.Explained != "" {
		s += "; explanation " + f.Explained
	}
	return s
}

// Name is the claim's id and, for a socket test, the case.
func (f Finding) Name() string {
	if f.Case != "" {
		return f.Claim.ID + " (" + f.Case + ")"
	}
	return f.Claim.ID
}

// WriteFindings prints the verdict table, "the paper's findings", with
// the run's busy-machine warning beside it; nothing without findings.
func WriteFindings(w io.Writer, fs []Finding, meta *record.Meta) error {
	if len(fs) == 0 {
		return nil
	}
	n := map[Agreement]int{}
	for _, f := range fs {
		n[f.Verdict]++
	}
	fmt.Fprintf(w, "\nThe paper's findings (the ratio of a series over another, 95 %% CI): agree %d, differ %d, cannot tell %d\n", n[Agrees], n[Differs], n[Undecided])
	if warning := meta.Disturbance().Warning(); warning != "" {
		fmt.Fprintf(w, "the verdicts rest on a run on a busy machine: %s\n", warning)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "claim\tratio\tpaper\tthis run\tverdict\texplanation\tsays")
	for _, f := range fs {
		verdict := f.Verdict.String()
		if f.More > 0 {
			verdict += fmt.Sprintf(" (~%d more units)", f.More)
		}
		fmt.Fprintf(tw, "%s\t%s over %s, %s\t%s (%s)\t%s\t%s\t%s\t%s\n", f.Name(), f.Claim.Series, f.Claim.Against, f.Claim.Metric,
			RangeText(f.Claim), f.Claim.Source, RatioText(f.Interval), verdict, or(f.Explained, "–"), f.Claim.Says)
	}
	return tw.Flush()
}

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// runFindings judges the run's own claims.
func runFindings(run Run) ([]Finding, error) {
	return Findings(run, ResolveClaims(run.Meta.Spec), DefaultOptions().Same)
}

// writeRunFindings prints the verdict table of the run's own claims, or
// why there is none.
func writeRunFindings(w io.Writer, run Run) error {
	fs, err := runFindings(run)
	if err != nil {
		_, err = fmt.Fprintf(w, "\nThe paper's findings: cannot judge: %v\n", err)
		return err
	}
	return WriteFindings(w, fs, &run.Meta)
}

// addFindings adds the verdict table of one run's claims to the page;
// a run on a busy machine says so in its caption.
func (r *Report) addFindings() {
	if len(r.Runs) != 1 || len(r.Runs[0].Meta.Spec.Claims) == 0 {
		return
	}
	fs, err := runFindings(r.Runs[0])
	if err != nil {
		r.Notes = append(r.Notes, "the paper's findings: cannot judge: "+err.Error())
		return
	}
	t := findingsTable(fs)
	if w := r.Runs[0].Meta.Disturbance().Warning(); w != "" {
		t.Caption += " The verdicts rest on a run on a busy machine: " + w
	}
	r.Tables = append(r.Tables, t)
}

// findingsTable is the verdict table as the page shows it.
func findingsTable(fs []Finding) Table {
	t := Table{ID: "tab-findings", Title: "The paper's findings",
		Caption: "Each claim of the spec: the paper's finding, the range of the ratio that agrees with it, this run's ratio with its 95 % interval, and the verdict: agrees when the whole interval lies in the range, differs when it lies wholly outside, else the run cannot tell. A difference's explanation is measured when the same claim agrees on the variant that sets the paper's condition.",
		Columns: []string{"claim", "the paper says", "where", "ratio", "paper", "this run", "verdict", "explanation"}}
	for _, f := range fs {
		class := map[Agreement]string{Agrees: "better", Differs: "worse", Undecided: "same"}[f.Verdict]
		t.Rows = append(t.Rows, []Cell{{Text: f.Name()}, {Text: f.Claim.Says}, {Text: f.Claim.Source},
			{Text: f.Claim.Series + " over " + f.Claim.Against + ", " + f.Claim.Metric}, {Text: RangeText(f.Claim)},
			{Text: RatioText(f.Interval)}, {Text: f.Verdict.String(), Class: class}, {Text: or(f.Explained, "–")}})
	}
	return t
}
