package gate

import (
	"slices"

	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/presets"
)

// ClaimsOfRun is JudgeClaims's from for the claims in the run's own spec.
const ClaimsOfRun = ""

// JudgeClaims judges the run in dir against a paper's claims (spec.Claim,
// report.Findings): those of the preset or spec file from, or, for
// ClaimsOfRun, the run's own. A claim that agrees holds, one that differs
// is broken; a run measured on a busy machine keeps its verdicts and says
// so beside each. It also gives the findings' stored summary (report.Store),
// for the claims' spec. Every error is bad input: no run, no claims, a
// claim whose series, test or metric the run lacks.
func JudgeClaims(dir, from string, note func(string)) ([]Result, report.StoredFindings, error) {
	var stored report.StoredFindings
	run, err := Load(dir)
	if err != nil {
		return nil, stored, err
	}
	for _, n := range run.Notes {
		note(n)
	}
	s := run.run.Meta.Spec
	if from != ClaimsOfRun {
		if s, err = claimsSpec(from); err != nil {
			return nil, stored, badInput("--claims: %v", err)
		}
	}
	if len(s.Claims) == 0 {
		return nil, stored, badInput("%s: %s has no claims (give --claims PRESET or FILE)", dir, s.Name)
	}
	measured, err := report.Measure(run.run, report.ResolveClaims(s), report.DefaultOptions().Same)
	if err != nil {
		return nil, stored, badInput("%s %v", s.Name, err)
	}
	why, err := busyRuns([]string{dir})
	if err != nil {
		return nil, stored, err
	}
	var out []Result
	for _, m := range measured {
		f := m.Judge()
		r := Result{Name: f.Name(), Verdict: [...]Verdict{report.Agrees: Holds, report.Differs: Broken, report.Undecided: CannotTell}[f.Verdict], Line: f.Line()}
		if len(why) > 0 {
			r.Line += "; but " + why[0]
		}
		out = append(out, r)
	}
	// A run of a preset, or of an edited copy named as it, is stored
	// with the fields it changed from the embedded preset.
	base := s
	if slices.Contains(presets.Names(), s.Name) {
		if p, err := spec.Preset(s.Name); err == nil {
			base = p
		}
	}
	return out, report.Store(run.run, measured, base), nil
}

// claimsSpec reads the spec whose claims are judged: a preset by name,
// else a spec file.
func claimsSpec(from string) (spec.Spec, error) {
	if slices.Contains(presets.Names(), from) {
		return spec.Preset(from)
	}
	return spec.Load(from)
}
