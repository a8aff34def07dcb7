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

// paperPreset is a preset with claims and its stored runs, cnperf's and
// imported data, in the files' order.
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
	// A preset's runs in the order they were made, so the latest is last
	// whatever its file is named.
	for _, p := range out {
		slices.SortStableFunc(p.runs, func(a, b paperRun) int { return a.stored.Date.Compare(b.stored.Date) })
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
// stale, cannot tell, unexplained), by the preset's latest run that judged it (the page's).
func tally(ps []paperPreset) (agree, measured, open int) {
	for _, p := range ps {
		for i := range p.claims {
			r := latest(p.runs, false, i)
			var fs []report.Finding // a stale claim has none
			if r != nil {
				fs = r.claims[i].Findings
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

// FindingsPage is docs/findings.md's body: the presets not run yet in a
// line, then a table per paper: the runs in its caption (preset, run,
// machine, date, commit; imported data), and per claim what the paper
// says and where, the range that agrees, the paper's own data's ratio
// where it was imported, cnperf's with its 95 % interval, the verdict and,
// for a difference, its explanation (its reason is in the preset).
func FindingsPage(root string) (string, error) {
	ps, err := loadFindings(root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var notRun []string
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && paper(ps[j].claims[0]) == paper(ps[i].claims[0]) {
			if len(ps[j].runs) == 0 {
				notRun = append(notRun, fmt.Sprintf("`%s` (%d claims)", ps[j].name, len(ps[j].claims)))
			}
			j++
		}
		writeTable(&b, paper(ps[i].claims[0]), ps[i:j])
		i = j
	}
	if len(notRun) > 0 {
		return "Not run yet: " + strings.Join(notRun, ", ") + ".\n" + b.String(), nil
	}
	return strings.TrimPrefix(b.String(), "\n"), nil
}

// writeTable writes the table of one paper's stored runs; nothing when
// there are none.
func writeTable(b *strings.Builder, paper string, ps []paperPreset) {
	var caption, rows []string
	published := false
	for _, p := range ps {
		for _, r := range p.runs {
			caption = append(caption, runCaption(p.name, r))
			published = published || r.stored.Imported != ""
		}
	}
	if len(caption) == 0 {
		return
	}
	for _, p := range ps {
		if len(p.runs) == 0 {
			continue
		}
		for i, c := range p.claims {
			measured, imported := latest(p.runs, false, i), latest(p.runs, true, i)
			row := []string{"`" + c.ID + "`", cell(c.Says) + " (" + cell(c.Source) + ")", report.RangeText(c)}
			if published {
				fig, verdict, _ := judged(imported, i)
				row = append(row, fig+", "+verdict)
			}
			fig, verdict, why := judged(measured, i)
			rows = append(rows, "| "+strings.Join(append(row, fig, verdict, why), " | ")+" |\n")
		}
	}
	head := []string{"claim", "the paper says", "agrees within", "cnperf, 95 % CI", "verdict", "explanation"}
	if published {
		head = slices.Insert(head, 3, "the paper's data")
	}
	fmt.Fprintf(b, "\n**%s**: %s:\n\n| %s |\n|%s\n%s", paper, strings.Join(caption, ";\n"), strings.Join(head, " | "),
		strings.Repeat("---|", len(head)), strings.Join(rows, ""))
}

// latest is the last stored run of a preset, cnperf's or imported, that
// judged claim i (a run narrowed to some tests or modes judges only some
// claims), else the last of them; nil when there is none.
func latest(runs []paperRun, imported bool, i int) *paperRun {
	var last, judged *paperRun
	for k, r := range runs {
		if (r.stored.Imported != "") != imported {
			continue
		}
		last = &runs[k]
		if len(r.claims[i].Findings) > 0 {
			judged = &runs[k]
		}
	}
	if judged != nil {
		return judged
	}
	return last
}

// runCaption names a stored run: its preset, run, machine, date and
// commit, and how it differs from the preset; or the data imported.
func runCaption(preset string, r paperRun) string {
	st := r.stored
	date := st.Date.Format("2006-01-02")
	if st.Imported != "" {
		return fmt.Sprintf("`%s`, the paper's data (%s, %s; `%s`)", preset, st.Imported, date, r.file)
	}
	s := fmt.Sprintf("`%s`, run %s on %s (%d cores, Linux %s), %s, cnperf %s (`%s`)", preset, st.Run, or(st.Machine.CPU, "an unknown CPU"),
		st.Machine.Cores, or(st.Machine.Kernel, "?"), date, st.Cnperf, r.file)
	if len(st.Changed) > 0 {
		s += ", shortened or narrowed from the preset: " + strings.Join(st.Changed, ", ")
	}
	if st.Busy != "" {
		s += ", on a busy machine: " + st.Busy
	}
	return s
}

// judged is the i-th claim on a stored run: its figure, verdict and
// explanation, or why there are none.
func judged(r *paperRun, i int) (figure, verdict, why string) {
	if r == nil {
		return "not run yet", "–", "–"
	}
	c := r.claims[i]
	switch {
	case c.Stale != "":
		return "stale: the claim's " + c.Stale + " changed since the run", "re-run to judge", "–"
	case len(c.Findings) == 0:
		return "not in this run", "–", "–"
	}
	why = "–"
	for _, f := range c.Findings {
		if f.Explained != "" {
			why = cell(explanation(f.Explained))
			break // the first case's: the claim has one explanation
		}
	}
	return cell(figures(c.Findings)), verdicts(c.Findings), why
}

// explanation is a finding's explanation in short: its verdict and the
// variant's ratio; the reason it names is the preset's (explain.because).
func explanation(s string) string {
	word, _, _ := strings.Cut(s, ":")
	word, _, _ = strings.Cut(word, " (")
	if _, on, ok := strings.Cut(s, "; on "); ok {
		return word + ", on " + on
	}
	if _, lacks, ok := strings.Cut(s, "; this run has no "); ok {
		return word + ": no " + lacks
	}
	return word
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
