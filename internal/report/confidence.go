package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/workload"
)

// costText renders a cost in percent, "–" when unknown.
func costText(v float64) string { return f(v, costPrec(v)) }

// costPrec gives small costs a decimal: 0.4 % is not 0 %.
func costPrec(v float64) int {
	if math.Abs(v) < 10 {
		return 1
	}
	return 0
}

// ciText is "[lo, hi]" of a ratio, "–" when unknown.
func ciText(iv analysis.Interval, prec int) string {
	if !iv.Known() {
		return "–"
	}
	return fmt.Sprintf("[%.*f, %.*f]", prec, iv.Lo, prec, iv.Hi)
}

// pctCIText is "[lo %, hi %]" of the change a ratio's interval spans.
func pctCIText(iv analysis.Interval) string {
	if !iv.Known() {
		return "–"
	}
	return fmt.Sprintf("[%+.1f %%, %+.1f %%]", (iv.Lo-1)*100, (iv.Hi-1)*100)
}

// diffCIText is "[lo, hi]" of a difference, each bound signed by sign,
// "–" when unknown.
func diffCIText(d analysis.DiffInterval, sign func(float64) string) string {
	if !d.Known() {
		return "–"
	}
	return "[" + sign(d.Lo) + ", " + sign(d.Hi) + "]"
}

// metricWords is a metric's title for a sentence: "transfer rate".
func metricWords(title string) string {
	t, _, _ := strings.Cut(title, ",")
	return strings.ToLower(t[:1]) + t[1:]
}

// Sentence says a mode's cost in words: "bridge costs 21 % of transfer
// rate (95 % CI 19–23 %)".
func Sentence(r analysis.RatioCI) string {
	cost, lo, hi := r.Cost()
	what := metricWords(r.Metric.Title)
	if r.Case != "" {
		what += " in " + r.Case
	}
	var s string
	switch {
	case math.IsNaN(cost):
		return fmt.Sprintf("%s: no ratio to the reference on %s", r.Mode, what)
	case cost >= 0 && r.Metric.HigherIsBetter:
		s = fmt.Sprintf("%s costs %s %% of %s", r.Mode, costText(cost), what)
	case cost >= 0:
		s = fmt.Sprintf("%s adds %s %% to %s", r.Mode, costText(cost), what)
	case r.Metric.HigherIsBetter:
		s = fmt.Sprintf("%s gains %s %% of %s", r.Mode, costText(-cost), what)
	default:
		s = fmt.Sprintf("%s takes %s %% off %s", r.Mode, costText(-cost), what)
	}
	if !r.Known() {
		return s + "; the run cannot give an interval (" + tooFew(r.Interval) + ")"
	}
	if cost < 0 {
		lo, hi = -hi, -lo
	}
	if lo < 0 {
		return fmt.Sprintf("%s, 95 %% CI %s to %s %%", s, costText(lo), costText(hi))
	}
	return fmt.Sprintf("%s, 95 %% CI %s–%s %%", s, costText(lo), costText(hi))
}

// tooFew says why an interval is missing.
func tooFew(iv analysis.Interval) string {
	if iv.Units < 2 {
		return fmt.Sprintf("%d paired unit(s), 2 needed", iv.Units)
	}
	return "no finite ratio"
}

// spanText names what an interval came from: "3 instances × 30 units".
func spanText(iv analysis.Interval) string {
	if iv.Instances > 1 {
		return fmt.Sprintf("%d instances, %d units", iv.Instances, iv.Units)
	}
	return fmt.Sprintf("%d units", iv.Units)
}

// WriteIntervalTable prints the ratios' 95 % intervals: for ping-pong one
// row per mode with each metric's ratio and interval, for other cases one
// line per case, mode and summary metric (the change of the mean). Nothing
// for no intervals.
func WriteIntervalTable(w io.Writer, cis []analysis.RatioCI, ref string) error {
	if len(cis) == 0 {
		return nil
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n95 %% confidence intervals against %s (from the units and the variance between lab instances; docs/report.md)\n", ref)
	if cis[0].Case == "" {
		writeSweepIntervals(&sb, cis)
	} else {
		writeCaseIntervals(&sb, cis)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func writeSweepIntervals(sb *strings.Builder, cis []analysis.RatioCI) {
	head := []string{"mode"}
	var modes []string
	byMode := map[string][]analysis.RatioCI{}
	for _, c := range cis {
		if byMode[c.Mode] == nil {
			modes = append(modes, c.Mode)
		}
		byMode[c.Mode] = append(byMode[c.Mode], c)
	}
	for _, c := range byMode[modes[0]] {
		head = append(head, c.Metric.Short)
	}
	table := [][]string{append(head, "from")}
	for _, m := range modes {
		row := []string{m}
		for _, c := range byMode[m] {
			row = append(row, textSig(c.Ratio, 2)+" "+ciText(c.Interval, 2))
		}
		table = append(table, append(row, spanText(byMode[m][0].Interval)))
	}
	writeAligned(sb, table, 1)
}

func writeCaseIntervals(sb *strings.Builder, cis []analysis.RatioCI) {
	table := [][]string{{"test", "mode", "metric", "change", "95 % CI", "from"}}
	var without []string
	known := map[string]bool{}
	for _, c := range cis {
		known[c.Case] = known[c.Case] || c.Known()
	}
	for _, c := range cis {
		if !known[c.Case] {
			if len(without) == 0 || without[len(without)-1] != c.Case {
				without = append(without, c.Case)
			}
			continue
		}
		if !summaryMetric(c) {
			continue
		}
		change, ci := "–", pctCIText(c.Interval)
		switch {
		case c.Diff != nil:
			// A count: its difference, as near zero on the reference a
			// percentage says nothing.
			if !math.IsNaN(c.Diff.Diff) {
				change = textSigned(c.Diff.Diff)
			}
			ci = diffCIText(*c.Diff, textSigned)
		case !math.IsNaN(c.Ratio):
			change = fmt.Sprintf("%+.1f %%", (c.Ratio-1)*100)
		}
		table = append(table, []string{c.Case, c.Mode, c.Metric.Short, change, ci, spanText(c.Interval)})
	}
	if len(table) > 1 {
		writeAligned(sb, table, 3)
	}
	if len(without) > 0 {
		fmt.Fprintf(sb, "no interval (fewer than 2 repetitions paired with the reference's): %s\n", strings.Join(without, "; "))
	}
}

// summaryMetric keeps the metrics a case's text table shows.
func summaryMetric(c analysis.RatioCI) bool {
	sc := analysis.Case{Metrics: []workload.Metric{c.Metric}}
	return len(sc.SummaryMetrics()) == 1
}

// ciKey finds an interval: a case ("" for a sweep of sizes), a series as
// the report names it, a metric key.
type ciKey struct{ kase, series, metric string }

// intervals are the report's ratios with their intervals: those of the
// first run that has the reference (ratios across runs pair no units).
type intervals struct {
	list  []analysis.RatioCI              // every ratio RunIntervals gives, series renamed
	table map[ciKey]analysis.Interval     // the tables' metrics, intervals only
	diffs map[ciKey]analysis.DiffInterval // counts: their differences
	ref   string                          // the reference series
}

// computeIntervals fills r.cis for reference mode ref.
func (r *Report) computeIntervals(ref string, o Options) {
	for _, run := range r.Runs {
		if !slices.Contains(run.Meta.SeriesKeys(), ref) {
			continue
		}
		name := func(mode string) string { return seriesName(r.Runs, run, mode) }
		r.cis = intervals{table: map[ciKey]analysis.Interval{}, diffs: map[ciKey]analysis.DiffInterval{}, ref: name(ref)}
		if len(r.Runs) == 1 {
			r.cis.ref = refLabel(run, ref)
		}
		for _, c := range RunIntervals(run, ref, o.Same) {
			r.cis.table[ciKey{c.Case, name(c.Mode), c.Metric.Key}] = c.Interval
			if c.Diff != nil {
				r.cis.diffs[ciKey{c.Case, name(c.Mode), c.Metric.Key}] = *c.Diff
			}
			c.Mode = name(c.Mode)
			r.cis.list = append(r.cis.list, c)
		}
		if run.Sweeps() {
			r.addSweepTableIntervals(run, ref, name)
		}
		return
	}
}

// SeriesSuffix joins a mode and its run's label in a series name.
const SeriesSuffix = analysis.SeriesSep

// addSweepTableIntervals adds the intervals of the per-request metrics
// the summary tables show (their requests per second are per request).
func (r *Report) addSweepTableIntervals(run Run, ref string, name func(string) string) {
	sweep := runSweep(run)
	for _, mode := range run.Meta.SeriesKeys() {
		if mode == ref {
			continue
		}
		for _, m := range analysis.PingPongMetrics() {
			r.cis.table[ciKey{"", name(mode), m.Key}] = analysis.IntervalOf(sweep.Paired(mode, ref, m.Key), analysis.GeoMeanOfRatios)
		}
	}
}

// ciCell is a table cell with the interval of a change shown beside it:
// the units' interval moved onto that change's ratio.
func (r *Report) ciCell(kase, series, metric string, ch analysis.Change) Cell {
	if ch.Class == "ref" {
		return Cell{Text: "ref", Class: "ref"}
	}
	if ch.Count {
		d, ok := r.cis.diffs[ciKey{kase, series, metric}]
		if !ok || math.IsNaN(ch.Diff) {
			return Cell{Text: "–"}
		}
		return Cell{Text: diffCIText(d.Around(ch.Diff), signed)}
	}
	iv, ok := r.cis.table[ciKey{kase, series, metric}]
	if !ok || math.IsNaN(ch.Percent) {
		return Cell{Text: "–"}
	}
	return Cell{Text: pctCIText(iv.Around(1 + ch.Percent/100))}
}

// addHeadline adds the page's first table: each mode's cost against the
// reference on the headline metrics, with its interval and in words.
func (r *Report) addHeadline() {
	var rows [][]Cell
	for _, c := range r.cis.list {
		if !c.Headline {
			continue
		}
		cost, lo, hi := c.Cost()
		ci := "–"
		if c.Known() {
			ci = "[" + costText(lo) + " %, " + costText(hi) + " %]"
		}
		metric := c.Metric.Title
		if c.Case != "" {
			metric = c.Case + ": " + metric
		}
		rows = append(rows, []Cell{{Text: c.Mode}, {Text: metric}, {Text: costText(cost) + " %", Class: costClass(c, lo, hi)},
			{Text: ci}, {Text: spanText(c.Interval)}, {Text: Sentence(c)}})
	}
	if len(rows) == 0 {
		return
	}
	r.Tables = append(r.Tables, Table{ID: "tab-headline", Section: headlineSection, Title: "What each mode costs against " + r.cis.ref,
		Caption: "Cost: how much worse than " + r.cis.ref + " (less transfer rate, throughput or requests; more latency), negative where the mode is better. " +
			"95 % CI: from the units of work (chunks of sizes, repetitions), each paired with " + r.cis.possessive() + " on the same unit: their variance within lab instances, and the instances' variance pooled over the modes; " +
			"red where the whole interval is a cost, green where it is a gain (docs/report.md).",
		Columns: []string{"mode", "metric", "cost", "95 % CI", "from", "in words"}, Rows: rows})
}

// headlineSection is the page's first section, before the contents.
const headlineSection = "headline"

// costClass colours a cost by what its interval rules out.
func costClass(c analysis.RatioCI, lo, hi float64) string {
	switch {
	case !c.Known():
		return ""
	case lo > 0:
		return "worse"
	case hi < 0:
		return "better"
	}
	return "same"
}

// DataInterval is one ratio with its interval in tables.json.
type DataInterval struct {
	Case      string `json:"case,omitempty"`
	Series    string `json:"series"`
	Metric    string `json:"metric"`
	Higher    bool   `json:"higher_is_better"`
	Headline  bool   `json:"headline"`
	Ratio     Num    `json:"ratio"`
	Lo        Num    `json:"ratio_lo"`
	Hi        Num    `json:"ratio_hi"`
	Cost      Num    `json:"cost_percent"`
	CostLo    Num    `json:"cost_lo"`
	CostHi    Num    `json:"cost_hi"`
	Instances int    `json:"instances"`
	Units     int    `json:"units"`
}

func intervalData(cis []analysis.RatioCI) []DataInterval {
	var out []DataInterval
	for _, c := range cis {
		cost, lo, hi := c.Cost()
		out = append(out, DataInterval{Case: c.Case, Series: c.Mode, Metric: c.Metric.Key, Higher: c.Metric.HigherIsBetter, Headline: c.Headline,
			Ratio: Num(c.Ratio), Lo: Num(c.Lo), Hi: Num(c.Hi), Cost: Num(cost), CostLo: Num(lo), CostHi: Num(hi), Instances: c.Instances, Units: c.Units})
	}
	return out
}
