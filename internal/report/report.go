package report

import (
	"errors"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/figure"
)

// Options shape a report.
type Options struct {
	Reference string  // reference mode; "" takes the first run's spec reference
	Bins      int     // most size groups (analysis.Dataset.Grouping): one per size when there are no more sizes
	SplitK    float64 // small/big split at SplitK x the TCP receive window
	Same      float64 // |% change| below which a value counts as the same as the reference
	Smooth    int     // bins averaged for the drawn lines and bands
	SizeAxis  string  // "auto" (or ""), "log" or "linear": see SizeAxes
}

// SizeAxes are the values of Options.SizeAxis. "auto" draws the size axis
// logarithmically when the measured sizes span more than two decades
// (logSizeDecades), linearly otherwise.
var SizeAxes = []string{"auto", "log", "linear"}

// logSizeDecades is how many decades the middle 90 % of the measured sizes
// must span for "auto" to draw a log size axis: ab's 10 B … 1 MB spans
// five and crowds into the first tenth of a linear axis; a uniform draw
// from 1 B to 500 kB spans one (its sizes lie mostly above 25 kB).
const logSizeDecades = 2

// DefaultOptions are the papers' choices: 3 x the receive window (Kratzke and Quint 2015).
func DefaultOptions() Options {
	return Options{Bins: 100, SplitK: 3, Same: 2, Smooth: 5, SizeAxis: "auto"}
}

// logSizes reports whether the figures draw message size on a log axis:
// as axis says, or for "auto" (and "") when the 5th to 95th percentile of
// the measured sizes span more than logSizeDecades.
func logSizes(axis string, d analysis.Dataset) bool {
	switch axis {
	case "log":
		return true
	case "linear":
		return false
	}
	lo, hi := d.SizeSpan()
	return hi/lo > math.Pow(10, logSizeDecades) // false for NaN
}

// Figure is one chart, rendered as SVG for the page.
type Figure struct {
	ID, Title, Caption string
	Chart              Chart
	SVG                template.HTML
}

// Chart is a figure that renders itself: figure.Chart or figure.BarChart.
type Chart interface {
	SVG(width, height vg.Length) ([]byte, error)
	PNG(width, height vg.Length, dpi int) ([]byte, error)
}

// Cell is one table cell; Class colours it (better, same, worse, ref).
type Cell struct {
	Text  string
	Class string
}

// Table is one table of the report.
type Table struct {
	ID, Title, Caption string
	Section            string // the page's section: "" for Tables, driversSection for Drivers
	Columns            []string
	Rows               [][]Cell
}

// SectionTables returns the tables of one section of the page, in order.
func (r *Report) SectionTables(section string) []Table {
	var out []Table
	for _, t := range r.Tables {
		if t.Section == section {
			out = append(out, t)
		}
	}
	return out
}

// Report is everything the page, the figure files and the table files show.
type Report struct {
	Title     string
	Generated time.Time
	Runs      []Run
	Reference string
	Window    int // TCP receive window in bytes (0: unknown)
	Split     int // small/big split in bytes
	Notes     []string
	Warnings  []string // runs measured on a busy machine
	Figures   []Figure
	Tables    []Table
	Data      Data // the numbers, for tables.json

	metricsShown []analysis.Metric // the metrics the data holds
	cases        []analysis.Case   // the cases measured over repetitions
	caseRef      string            // the cases' reference series ("": several runs')
	drivers      []runDrivers      // runs whose modes ran on several drivers
	cis          intervals         // ratios to the reference with their 95 % intervals
}

// pagePoints caps the raw points per plot: each costs ~130 bytes of SVG.
const pagePoints = 1500

// Figure sizes: the page shows SVG at this size; PNGs are rendered at 150 dpi.
const (
	figW = 7 * vg.Inch
	figH = 4.5 * vg.Inch
)

// Build computes the report. It fails only when nothing can be shown.
func Build(runs []Run, notes []string, o Options) (*Report, error) {
	if o.Bins < 1 {
		o.Bins = DefaultOptions().Bins
	}
	runs = named(runs, o.Reference)
	r := &Report{Title: "cnperf report", Generated: time.Now().UTC(), Runs: runs, Notes: notes, Warnings: busyWarnings(runs)}
	if len(runs) == 0 {
		return r, errors.New("no run could be read")
	}
	ref := o.Reference
	if ref == "" {
		ref = runs[0].Meta.Spec.ReferenceKey()
	}
	sweeps, repeats := false, false
	for _, run := range runs {
		sweeps = sweeps || run.Sweeps()
		repeats = repeats || !run.Sweeps()
	}
	r.computeIntervals(ref, o)
	r.addHeadline()
	r.addRunsTable()
	r.addPolicy()
	r.addCilium()
	r.addDrivers(o)
	if repeats {
		// The cases measured over repetitions: bars and tables per case.
		var series []string
		for _, run := range runs {
			for _, m := range run.Meta.SeriesKeys() {
				series = append(series, seriesName(runs, run, m))
			}
		}
		cases := Cases(runs, ref, o.Same)
		if len(cases) == 0 && !sweeps {
			return r, errors.New("no socket test finished in " + strings.Join(runDirs(runs), ", "))
		}
		r.Reference = ref
		if !slices.Contains(series, ref) {
			r.Reference = ""
		}
		r.caseRef = r.Reference // the sweep's view sets its own (addSweep)
		r.cases = cases
		r.addCases(cases, series, o)
		r.addHops(cases, series)
		r.addWaterfall()
		r.addUnderLoad()
		r.addFlaps()
		r.addServices(cases)
	}
	if sweeps {
		// The size-sweep view: curves, loss and impacts over message size.
		if err := r.addSweep(ref, o); err != nil {
			return r, err
		}
		r.addInstances(ref)
		r.addCellTCP()
		if !repeats {
			r.addFlaps() // else added with the cases, for every run
		}
	}
	r.addCost()
	r.addAttribution(ref)
	r.addFlames(ref)
	r.addFindings()
	if !sweeps {
		r.Data = Data{Generated: r.Generated, Reference: r.Reference}
		for _, run := range r.Runs {
			r.Data.Runs = append(r.Data.Runs, DataRun{Dir: run.Dir, Label: run.Label, Status: run.Meta.Status, Modes: run.Meta.SeriesKeys(), Samples: measured(run.Records)})
		}
	}
	r.Data.Cases = caseData(r.cases)
	r.Data.Drivers = driverData(r.drivers)
	r.Data.Intervals = intervalData(r.cis.list)
	r.Data.Notes = r.Notes
	r.Data.Warnings = r.Warnings
	return r, nil
}

// addSweep adds the size-sweep view of the runs that swept message sizes
// (ping-pong): figures and tables over message size.
func (r *Report) addSweep(ref string, o Options) error {
	runs := r.Runs
	// Series: modes, or "mode · run" when several runs are compared.
	samples := map[string][]record.Sample{}
	var series []string
	refSeries := ""
	for _, run := range runs {
		if !run.Sweeps() {
			continue
		}
		// Only the series run.json lists: the reader skips (and counts)
		// samples of any other, so a stored run cannot grow the report.
		modes := run.Meta.SeriesKeys()
		for _, m := range modes {
			name := seriesName(runs, run, m)
			series = append(series, name)
			if m == ref && refSeries == "" {
				refSeries = name
			}
		}
		for _, s := range run.PingPong {
			name := seriesName(runs, run, s.Mode)
			samples[name] = append(samples[name], s)
		}
		if w := run.Meta.ReceiveWindow; w > 0 && r.Window == 0 {
			r.Window = w
		} else if w > 0 && w != r.Window {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: TCP receive window %d differs from %d; guides and the split use %d", run.Dir, w, r.Window, r.Window))
		}
	}
	if ref != "" && refSeries == "" {
		r.Notes = append(r.Notes, fmt.Sprintf("reference mode %q is not in the data: ratios and loss plots are left out", ref))
	}
	d, warns := analysis.NewDataset(series, samples, refSeries)
	r.Notes = append(r.Notes, warns...)
	r.Reference = d.Reference
	total := 0
	for _, s := range d.Series {
		total += len(d.OK[s])
	}
	if total == 0 {
		return errors.New("no successful samples in " + strings.Join(runDirs(runs), ", "))
	}
	if r.Window > 0 {
		r.Split = int(math.Round(o.SplitK * float64(r.Window)))
	}
	r.addFigures(d, o)
	r.addTables(d, o)
	r.Data = buildData(r, d, o)
	return nil
}

// maxGuides caps the dashed lines of a figure: a receive window far below
// the largest size (an import's --receive-window 1) would otherwise draw
// one line per multiple, millions of them.
const maxGuides = 20

// guideStep is k when guides draws every k-th multiple of the receive
// window up to max bytes, so that at most maxGuides are drawn; 1 when none
// is skipped, 0 without a window.
func (r *Report) guideStep(max float64) float64 {
	if r.Window <= 0 {
		return 0
	}
	return math.Max(1, math.Ceil(math.Floor(max/float64(r.Window))/maxGuides))
}

// guides returns every guideStep-th multiple of the receive window up to
// max bytes, in kB: at most maxGuides.
func (r *Report) guides(max float64) []float64 {
	k := r.guideStep(max)
	if k == 0 {
		return nil
	}
	var g []float64
	w := float64(r.Window)
	for i := k; i*w <= max && len(g) < maxGuides; i += k {
		g = append(g, i*w/1000)
	}
	return g
}

// binSeries turns bins into a drawable series (x in kB).
func binSeries(name string, bins []analysis.Bin) figure.Series {
	s := figure.Series{Name: name, Band50: &figure.Band{}, Band90: &figure.Band{}}
	for _, b := range bins {
		s.X = append(s.X, (b.Lo+b.Hi)/2/1000)
		s.Median = append(s.Median, b.Median)
		s.Band50.Lo = append(s.Band50.Lo, b.P25)
		s.Band50.Hi = append(s.Band50.Hi, b.P75)
		s.Band90.Lo = append(s.Band90.Lo, b.P5)
		s.Band90.Hi = append(s.Band90.Hi, b.P95)
	}
	return s
}

// betterWord says which direction is better, for a chart's subtitle.
func betterWord(higher bool) string {
	if higher {
		return "bigger is better"
	}
	return "smaller is better"
}

func (r *Report) add(id, title, caption string, c figure.Chart) {
	c.IDPrefix = id + "-"
	r.addChart(id, title, caption, c)
}

// addChart renders c for the page, or notes why it could not.
func (r *Report) addChart(id, title, caption string, c Chart) {
	svg, err := c.SVG(figW, figH)
	if err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("figure %q not drawn: %v", title, err))
		return
	}
	r.Figures = append(r.Figures, Figure{ID: id, Title: title, Caption: caption, Chart: c, SVG: template.HTML(svg)})
}

func (r *Report) addFigures(d analysis.Dataset, o Options) {
	xl := "Message size (kB)"
	xlog := logSizes(o.SizeAxis, d)
	if xlog {
		xl = "Message size (kB, log scale)"
	}
	groups := groupingText(d.Grouping(o.Bins))
	maxSize := float64(d.MaxSize)
	window := ""
	switch k := r.guideStep(maxSize); {
	case len(r.guides(maxSize)) == 0: // no multiple within the sizes: nothing drawn, nothing to say
	case k == 1:
		window = fmt.Sprintf(" Dashed lines: multiples of the TCP receive window (%d bytes).", r.Window)
	case k > 1:
		window = fmt.Sprintf(" Dashed lines: every %.0fth multiple of the TCP receive window (%d bytes), thinned to at most %d.", k, r.Window, maxGuides)
		r.Notes = append(r.Notes, fmt.Sprintf("TCP receive window %d bytes against messages up to %d bytes: the figures' dashed guides are thinned to every %.0fth multiple (at most %d)", r.Window, d.MaxSize, k, maxGuides))
	}
	bands := " Lines: median " + groups + "; dark band: 25th–75th percentile; light band: 5th–95th percentile."
	for _, key := range []string{"transfer", "latency", "rps"} {
		m, _ := analysis.MetricByKey(key)
		c := figure.Chart{Title: m.Title, Subtitle: betterWord(m.HigherIsBetter), XLabel: xl, YLabel: m.Title + " (" + m.Unit + ")", VLines: r.guides(maxSize), XLog: xlog}
		for _, s := range d.Series {
			c.Series = append(c.Series, binSeries(s, analysis.SmoothBins(d.Bins(s, m, o.Bins), o.Smooth)))
		}
		r.add("fig-"+key, m.Title+" against message size", fmt.Sprintf("%s of every mode against message size.%s%s", m.Title, bands, window), c)
	}
	// One plot per series and metric, with the raw points (Kratzke and Quint 2015, Figure 3).
	for _, key := range []string{"transfer", "latency", "rps"} {
		m, _ := analysis.MetricByKey(key)
		for i, s := range d.Series {
			bs := binSeries(s, analysis.SmoothBins(d.Bins(s, m, o.Bins), o.Smooth))
			for _, smp := range d.OK[s] {
				bs.PX = append(bs.PX, float64(smp.Size)/1000)
				bs.PY = append(bs.PY, m.Value(smp))
			}
			c := figure.Chart{Title: m.Title + ": " + s, Subtitle: betterWord(m.HigherIsBetter), XLabel: xl, YLabel: m.Title + " (" + m.Unit + ")",
				VLines: r.guides(maxSize), Series: []figure.Series{bs}, ColourIndex: i, MaxPoints: pagePoints, XLog: xlog}
			r.add(fmt.Sprintf("fig-%s-%d", key, i), m.Title+": "+s,
				fmt.Sprintf("Requests of %s as translucent points (at most %d, evenly thinned), with the median and bands %s.%s", s, pagePoints, groups, window), c)
		}
	}
	if d.Reference == "" {
		return
	}
	// Loss plots (Kratzke and Quint 2015, Figures 4 and 6): medians relative to the reference.
	one := 1.0
	for _, key := range []string{"transfer", "latency"} {
		m, _ := analysis.MetricByKey(key)
		c := figure.Chart{Title: m.Title + " relative to " + d.Reference, Subtitle: betterWord(m.HigherIsBetter), XLabel: xl, YLabel: "Ratio to " + d.Reference, VLines: r.guides(maxSize), HLine: &one, YPercent: true, XLog: xlog}
		for i, s := range d.Series {
			if s == d.Reference {
				continue
			}
			ls := lossSeries(s, d.Loss(s, m, o.Bins), o.Smooth)
			ls.Color = figure.SeriesColor(i) // each mode keeps its colour from the comparison plots
			c.Series = append(c.Series, ls)
		}
		if len(c.Series) == 0 {
			continue
		}
		r.add("fig-loss-"+key, m.Title+" relative to "+d.Reference,
			fmt.Sprintf("Each mode's median %s divided by %s's median, %s; 100 %% = no difference.%s", strings.ToLower(m.Title), d.Reference, groups, window), c)
	}
	// Layered impacts (Kratzke 2015, equations 1-5).
	tm, _ := analysis.MetricByKey("transfer")
	imps := d.Impacts(tm, o.Bins)
	if len(imps) > 0 {
		c := figure.Chart{Title: "Layered impacts on transfer rate", Subtitle: "bigger is better", XLabel: xl, YLabel: "Ratio", VLines: r.guides(maxSize), HLine: &one, YPercent: true, XLog: xlog}
		var parts []string
		for _, im := range imps {
			c.Series = append(c.Series, lossSeries(im.Name, im.Bins, o.Smooth))
			parts = append(parts, fmt.Sprintf("%s = %s (median %.0f %%)", im.Name, im.Formula, im.Median*100))
		}
		r.add("fig-impacts", "Layered impacts on transfer rate", "Each layer's cost on top of the one below it: "+strings.Join(parts, "; ")+"."+window, c)
	}
}

// lossSeries draws loss bins as a smoothed line (x in kB).
func lossSeries(name string, bins []analysis.LossBin, smooth int) figure.Series {
	s := figure.Series{Name: name}
	ys := make([]float64, len(bins))
	for i, b := range bins {
		s.X = append(s.X, (b.Lo+b.Hi)/2/1000)
		ys[i] = b.Ratio
	}
	s.Median = movingMean(ys, smooth)
	return s
}

// movingMean averages the non-NaN values within ±w/2 of each point; NaN
// points stay NaN so gaps show.
func movingMean(ys []float64, w int) []float64 {
	out := make([]float64, len(ys))
	h := w / 2
	for i := range ys {
		if math.IsNaN(ys[i]) {
			out[i] = math.NaN()
			continue
		}
		sum, n := 0.0, 0
		for j := max(0, i-h); j <= min(len(ys)-1, i+h); j++ {
			if !math.IsNaN(ys[j]) {
				sum += ys[j]
				n++
			}
		}
		out[i] = sum / float64(n)
	}
	return out
}

func secondsDur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
