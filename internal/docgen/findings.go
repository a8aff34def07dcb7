package docgen

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/presets"
)

// FindingsDir holds the stored findings of runs (cnperf check RUN --claims
// --save FILE), relative to the repository's root.
const FindingsDir = "docs/findings"

// paperRun is one stored run of a preset, its claims judged anew.
type paperRun struct {
	file   string
	stored report.StoredFindings
	claims []report.Rejudged
}

// paperPreset is a preset with claims and its stored runs, cnperf's own
// first, then imported data.
type paperPreset struct {
	name   string
	claims []spec.Claim
	runs   []paperRun
}

// loadFindings reads every stored run under root's FindingsDir and judges
// it on the claims its preset has now; presets are those with claims, in
// name order. A file that is not a summary, or names a preset without
// claims, is an error naming it.
func loadFindings(root string) ([]paperPreset, error) {
	var out []paperPreset
	for _, name := range presets.Names() {
		s, err := spec.Preset(name)
		if err != nil {
			return nil, err
		}
		if len(s.Claims) > 0 {
			out = append(out, paperPreset{name: name, claims: report.ResolveClaims(s)})
		}
	}
	files, err := filepath.Glob(filepath.Join(root, FindingsDir, "*.json"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		name := filepath.ToSlash(strings.TrimPrefix(f, root+string(filepath.Separator)))
		r, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		st, err := report.ReadStored(r, name)
		r.Close()
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(out, func(p paperPreset) bool { return p.name == st.Preset })
		if i < 0 {
			return nil, fmt.Errorf("%s: preset %q has no claims", name, st.Preset)
		}
		out[i].runs = append(out[i].runs, paperRun{file: name, stored: st, claims: report.Rejudge(st, out[i].claims)})
	}
	for _, p := range out {
		slices.SortStableFunc(p.runs, func(a, b paperRun) int {
			return strings.Compare(a.stored.Imported, b.stored.Imported)
		})
	}
	return out, nil
}

// paper is the paper a claim's source names first ("Kratzke 2015").
func paper(c spec.Claim) string {
	p, _, _ := strings.Cut(c.Source, ",")
	return p
}

// Tally counts claims over the stored runs cnperf measured (imported data
// tests the claims, not cnperf): agreeing in every case, differing with
// every difference's explanation measured, and the rest open (not run,
// stale, cannot tell, unexplained). A claim counts once, by its latest run.
func tally(ps []paperPreset) (agree, measured, open int) {
	for _, p := range ps {
		for i := range p.claims {
			var fs []report.Finding
			for _, r := range p.runs {
				if r.stored.Imported == "" && r.claims[i].Stale == "" && len(r.claims[i].Findings) > 0 {
					fs = r.claims[i].Findings
				}
			}
			switch claimVerdict(fs) {
			case report.Agrees:
				agree++
			case report.Differs:
				measured++
			default:
				open++
			}
		}
	}
	return agree, measured, open
}

// claimVerdict is Agrees when every case agrees, Differs when none is
// undecided and every difference is explained by measurement, else
// Undecided (open).
func claimVerdict(fs []report.Finding) report.Agreement {
	if len(fs) == 0 {
		return report.Undecided
	}
	v := report.Agrees
	for _, f := range fs {
		switch {
		case f.Verdict == report.Undecided, f.Verdict == report.Differs && !strings.HasPrefix(f.Explained, "measured"):
			return report.Undecided
		case f.Verdict == report.Differs:
			v = report.Differs
		}
	}
	return v
}

// FindingsCount is the README's line: the claims' tally and a link to the
// page.
func FindingsCount(root string) (string, error) {
	ps, err := loadFindings(root)
	if err != nil {
		return "", err
	}
	a, m, o := tally(ps)
	return fmt.Sprintf("Of the papers' %d claims cnperf's stored runs find %d agreeing, %d differing with an explanation measured and %d open: [docs/findings.md](docs/findings.md).\n", a+m+o, a, m, o), nil
}

// FindingsPage is docs/findings.md's body: the presets not run yet, then
// per preset each stored run's caption (the paper first) and its table (claim, what the paper says and
// where, the range that agrees, cnperf's ratio with its 95 % interval,
// the verdict), each difference's explanation below it; a preset without
// a stored run in one line.
func FindingsPage(root string) (string, error) {
	ps, err := loadFindings(root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var notRun []string
	for _, p := range ps {
		if len(p.runs) == 0 {
			notRun = append(notRun, fmt.Sprintf("`%s` (%d claims)", p.name, len(p.claims)))
		}
		for _, r := range p.runs {
			writeRun(&b, paper(p.claims[0]), p.name, r)
		}
	}
	if len(notRun) > 0 {
		return "Not run yet: " + strings.Join(notRun, ", ") + ".\n" + b.String(), nil
	}
	return strings.TrimPrefix(b.String(), "\n"), nil
}

// writeRun writes one stored run's caption, table and explanations.
func writeRun(b *strings.Builder, paper, preset string, r paperRun) {
	st := r.stored
	date := st.Date.Format("2006-01-02")
	b.WriteString("\n")
	if st.Imported != "" {
		fmt.Fprintf(b, "**%s**, `%s` on the paper's own published data (%s, %s; `%s`):\n\n", paper, preset, st.Imported, date, r.file)
	} else {
		fmt.Fprintf(b, "**%s**, `%s`, run %s on %s (%d cores, Linux %s), %s, cnperf %s (`%s`)", paper, preset, st.Run, or(st.Machine.CPU, "an unknown CPU"),
			st.Machine.Cores, or(st.Machine.Kernel, "?"), date, st.Cnperf, r.file)
		if len(st.Changed) > 0 {
			fmt.Fprintf(b, "; shortened or narrowed from the preset: %s", strings.Join(st.Changed, ", "))
		}
		if st.Busy != "" {
			fmt.Fprintf(b, "; on a busy machine: %s", st.Busy)
		}
		b.WriteString(":\n\n")
	}
	b.WriteString("| claim | the paper says | agrees within | cnperf, 95 % CI | verdict |\n|---|---|---|---|---|\n")
	var why []string
	for _, c := range r.claims {
		says := cell(c.Claim.Says) + " (" + cell(c.Claim.Source) + ")"
		switch {
		case c.Stale != "":
			fmt.Fprintf(b, "| `%s` | %s | %s | stale: the claim's %s changed since the run | re-run to judge |\n", c.Claim.ID, says, report.RangeText(c.Claim), c.Stale)
		case c.Missing:
			fmt.Fprintf(b, "| `%s` | %s | %s | not in this run | – |\n", c.Claim.ID, says, report.RangeText(c.Claim))
		}
		if len(c.Findings) > 0 {
			fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", c.Claim.ID, says, report.RangeText(c.Claim), cell(figures(c.Findings)), verdicts(c.Findings))
		}
		for _, f := range c.Findings {
			if f.Explained != "" {
				why = append(why, fmt.Sprintf("- `%s`: explanation %s", cell(f.Name()), f.Explained))
				break // the first case's: the claim has one explanation
			}
		}
	}
	if len(why) > 0 {
		b.WriteString("\n" + strings.Join(why, "\n") + "\n")
	}
}

// figures is a claim's ratio, or over a socket test's cases the lowest
// and the highest: one row a claim, however many cases.
func figures(fs []report.Finding) string {
	if len(fs) == 1 {
		return report.RatioText(fs[0].Interval)
	}
	lo, hi := fs[0], fs[0]
	for _, f := range fs {
		if f.Ratio < lo.Ratio {
			lo = f
		}
		if f.Ratio > hi.Ratio {
			hi = f
		}
	}
	return fmt.Sprintf("%d cases, %s (%s) to %s (%s)", len(fs), report.RatioText(lo.Interval), lo.Case, report.RatioText(hi.Interval), hi.Case)
}

// verdicts is the claim's verdict, or its cases' counted by verdict.
func verdicts(fs []report.Finding) string {
	n := map[report.Agreement]int{}
	for _, f := range fs {
		n[f.Verdict]++
	}
	if len(n) == 1 {
		return fs[0].Verdict.String()
	}
	var out []string
	for _, a := range []report.Agreement{report.Agrees, report.Differs, report.Undecided} {
		if n[a] > 0 {
			out = append(out, fmt.Sprintf("%s %d", a, n[a]))
		}
	}
	return strings.Join(out, ", ")
}

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
