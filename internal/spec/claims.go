package spec

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/workload"
)

// Claim is one finding of the paper a preset reproduces, as data a run is
// judged against (report/claims): the ratio of a metric of one series to
// another's, and the range of it that agrees with the paper.
type Claim struct {
	ID     string `yaml:"id" json:"id"`
	Says   string `yaml:"says" json:"says"`     // the finding in words
	Source string `yaml:"source" json:"source"` // where the paper says it: section, figure, table
	Metric string `yaml:"metric" json:"metric"` // a metric key, as check --max-cost names it
	Series string `yaml:"series" json:"series"` // MODE[@DRIVER][/VARIANT]
	// Against is the series compared with; "" the spec's reference under
	// the series' own variant (AgainstKey).
	Against string `yaml:"against,omitempty" json:"against,omitempty"`
	Test    string `yaml:"test,omitempty" json:"test,omitempty"`   // a socket test's label; "" ping-pong
	Sizes   []int  `yaml:"sizes,omitempty" json:"sizes,omitempty"` // [lo, hi] bytes, inclusive: the ping-pong sizes pooled
	// Ratio is what agrees: series/against within [lo, hi]; a nil bound
	// is open.
	Ratio   []*float64   `yaml:"ratio" json:"ratio"`
	Explain *Explanation `yaml:"explain,omitempty" json:"explain,omitempty"`
}

// Explanation is the condition a difference from the paper is blamed on,
// and how it is tested: a variant that sets it to the paper's value, or
// why it cannot be tested.
type Explanation struct {
	Because    string `yaml:"because" json:"because"`
	Variant    string `yaml:"variant,omitempty" json:"variant,omitempty"`
	Untestable string `yaml:"untestable,omitempty" json:"untestable,omitempty"`
}

// Bounds gives the claim's range, ±Inf for an open bound.
func (c Claim) Bounds() (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if len(c.Ratio) == 2 && c.Ratio[0] != nil {
		lo = *c.Ratio[0]
	}
	if len(c.Ratio) == 2 && c.Ratio[1] != nil {
		hi = *c.Ratio[1]
	}
	return lo, hi
}

// AgainstKey is the series the claim compares with: Against, or the
// reference mode under the series' own variant and driver.
func (s Spec) AgainstKey(c Claim) string {
	if c.Against != "" {
		return c.Against
	}
	labs := s.Labs()
	for _, l := range labs {
		if l.Key != c.Series {
			continue
		}
		for _, r := range labs {
			// bare runs on the first driver only: it is every driver's.
			if r.Mode == s.Reference && (r.Driver == l.Driver || r.Mode == "bare") && r.Conditions == l.Conditions {
				return r.Key
			}
		}
	}
	return s.ReferenceKey()
}

// CoveredClaims are the claims whose series the spec still runs: a run
// that narrows a preset's modes (run --modes) judges the claims left.
func (s Spec) CoveredClaims() []Claim {
	keys := s.ModeKeys()
	var out []Claim
	for _, c := range s.Claims {
		if a := s.AgainstKey(c); slices.Contains(keys, c.Series) && slices.Contains(keys, a) && a != c.Series {
			out = append(out, c)
		}
	}
	return out
}

var claimIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// MaxClaims bounds a spec's claims; a paper makes a few dozen at most.
const MaxClaims = 100

// validateClaims checks every claim against the spec it is in: its series
// are the spec's, its test one of the spec's, its variant one of the
// spec's variants. It names the first bad field as claims[i].FIELD.
func (s Spec) validateClaims() error {
	if len(s.Claims) > MaxClaims {
		return fmt.Errorf("claims: %d, more than %d", len(s.Claims), MaxClaims)
	}
	keys := s.ModeKeys()
	for i, c := range s.Claims {
		if err := s.validateClaim(c, keys); err != nil {
			return fmt.Errorf("claims[%d].%w", i, err)
		}
		if slices.ContainsFunc(s.Claims[:i], func(o Claim) bool { return o.ID == c.ID }) {
			return fmt.Errorf("claims[%d].id %q: there twice", i, c.ID)
		}
	}
	return nil
}

func (s Spec) validateClaim(c Claim, keys []string) error {
	series := func(field, k string) error {
		if !slices.Contains(keys, k) {
			return fmt.Errorf("%s %.64q: not a series of the spec (%s)", field, k, strings.Join(keys, ", "))
		}
		return nil
	}
	switch {
	case !claimIDRE.MatchString(c.ID):
		return fmt.Errorf("id %.64q: use a-z, 0-9 and '-', at most 64", c.ID)
	case strings.TrimSpace(c.Says) == "":
		return fmt.Errorf("says: must say the paper's finding")
	case strings.TrimSpace(c.Source) == "":
		return fmt.Errorf("source: must name where the paper says it (section, figure, table)")
	case c.Metric == "":
		return fmt.Errorf("metric: must name a metric key (transfer, latency, ...)")
	case len(c.Says) > MaxLabelBytes*4, len(c.Source) > MaxLabelBytes, len(c.Metric) > MaxLabelBytes, len(c.Test) > MaxLabelBytes:
		return fmt.Errorf("says, source, metric, test: longer than allowed")
	}
	if err := series("series", c.Series); err != nil {
		return err
	}
	if c.Against != "" {
		if err := series("against", c.Against); err != nil {
			return err
		}
	}
	if s.AgainstKey(c) == c.Series {
		return fmt.Errorf("series %q: compared with itself (give against)", c.Series)
	}
	if c.Test != "" && !slices.ContainsFunc(s.Tests, func(t workload.Test) bool { return t.Label() == c.Test }) {
		return fmt.Errorf("test %.64q: not a test of the spec", c.Test)
	}
	if c.Sizes != nil {
		if len(c.Sizes) != 2 || c.Sizes[0] < 1 || c.Sizes[0] > c.Sizes[1] {
			return fmt.Errorf("sizes %v: want [LO, HI] bytes, 1 <= LO <= HI", c.Sizes)
		}
		if c.Test != "" {
			return fmt.Errorf("sizes: ping-pong's message sizes; the claim is on test %q", c.Test)
		}
	}
	if len(c.Ratio) != 2 || (c.Ratio[0] == nil && c.Ratio[1] == nil) {
		return fmt.Errorf("ratio: want [LO, HI], either null for an open bound, not both")
	}
	lo, hi := c.Bounds()
	for _, b := range c.Ratio {
		if b != nil && (math.IsNaN(*b) || math.IsInf(*b, 0) || *b < 0) || lo > hi {
			return fmt.Errorf("ratio [%v, %v]: want finite 0 <= LO <= HI", lo, hi)
		}
	}
	if e := c.Explain; e != nil {
		switch {
		case strings.TrimSpace(e.Because) == "":
			return fmt.Errorf("explain.because: must name the condition the difference is blamed on")
		case (e.Variant == "") == (e.Untestable == ""):
			return fmt.Errorf("explain: give one of variant (setting the paper's value) or untestable (why not)")
		case e.Variant != "" && !slices.ContainsFunc(s.Variants, func(v conditions.Set) bool { return v.Label() == e.Variant }):
			return fmt.Errorf("explain.variant %.64q: not a variant of the spec", e.Variant)
		}
	}
	return nil
}
