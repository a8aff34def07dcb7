package report

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"image/color"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/figure"
)

// Bounds of a drawn flame graph, so a report with many series stays small
// (a frame is ~200 bytes of SVG): frames narrower than flameMinShare of
// the graph, or beyond its flameMaxFrames widest, are drawn as their
// caller's own time; stacks deeper than flameMaxDepth are cut there.
const (
	flameMinShare  = 0.001
	flameMaxFrames = 400
	flameMaxDepth  = 64
)

// SeriesProfile is one series' stacks merged over its profiled cells
// (counts summed), with what its flame graphs divide by.
type SeriesProfile struct {
	Series  string // the series key
	Stacks  record.Stacks
	Samples uint64
	Cells   int
	Hz      int // the cells' sampling rate; 0 when they differ
	// Work is what its cells did, in the first of workUnits every cell
	// recorded: ping-pong's requests answered, socket tests'
	// transactions, or the bytes they moved (CellKernel.Bytes) in GB; 0
	// when there is none or the cells' rates differ.
	Work float64
	Unit string
}

// workUnits are the units of SeriesProfile.Work, in order of preference,
// and how a frame's CPU time per unit is shown.
var workUnits = []struct {
	name       string
	scale      float64 // from seconds
	text, work string
}{
	{"request", 1e6, "µs CPU per request", "%s requests answered"},
	{"transaction", 1e6, "µs CPU per transaction", "%s transactions"},
	{"GB", 1, "s CPU per GB", "%s GB moved"},
}

// unitOf is the Work unit named name.
func unitOf(name string) (scale float64, text, work string) {
	for _, u := range workUnits {
		if u.name == name {
			return u.scale, u.text, u.work
		}
	}
	return 0, "", ""
}

// Profiles merges each series' profiled cells' stacks, in the run's series
// order; a cell whose stacks cannot be read is left out and said in a note.
func Profiles(run Run) ([]SeriesProfile, []string) {
	// Socket cells' transactions: their rate over the cell's time.
	trans := map[int]float64{}
	cells := Cells(run.Meta)
	for _, o := range analysis.Observations(run.Records, run.Costs, run.CPU, cells, func(m string) string { return m }) {
		if c := cells[o.Cell]; o.Values["trans_per_s"] > 0 {
			trans[o.Cell] = o.Values["trans_per_s"] * c.End.Sub(c.Start).Seconds()
		}
	}
	var out []SeriesProfile
	var notes []string
	for _, key := range run.Meta.SeriesKeys() {
		p := SeriesProfile{Series: key, Stacks: record.Stacks{}}
		work, lacks := map[string]float64{}, map[string]bool{}
		count := func(unit string, v float64) {
			work[unit] += v
			lacks[unit] = lacks[unit] || !(v > 0)
		}
		for _, c := range run.Meta.Cells {
			if c.Mode != key || c.Profile == nil {
				continue
			}
			// The file's name follows from the index: a run directory
			// travels, and its run.json names no path to trust.
			s, err := record.ReadStacks(filepath.Join(run.Dir, record.StacksFile(c.Index)))
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: the stacks of cell %d are left out of its flame graphs: %v", key, c.Index, err))
				continue
			}
			if p.Cells == 0 || p.Hz == c.Profile.Hz {
				p.Hz = c.Profile.Hz
			} else {
				p.Hz = 0
			}
			p.Cells++
			var bytes float64
			if c.Kernel != nil {
				bytes = float64(c.Kernel.Bytes)
			}
			if c.Case == "" {
				count("request", float64(c.Samples-c.Failed))
				count("transaction", 0)
			} else {
				count("request", 0)
				count("transaction", trans[c.Index])
			}
			count("GB", bytes/1e9)
			for stack, n := range s {
				p.Stacks[stack] += n
				p.Samples += n
			}
		}
		for _, u := range workUnits {
			if p.Hz > 0 && !lacks[u.name] && work[u.name] > 0 {
				p.Work, p.Unit = work[u.name], u.name
				break
			}
		}
		if p.Samples > 0 {
			out = append(out, p)
		}
	}
	return out, notes
}

// perUnit is the CPU one sample stands for divided by the work, as
// shown (workUnits): a frame's samples times it are its CPU per unit of
// work; 0 where there is no unit.
func (p SeriesProfile) perUnit() float64 {
	if p.Work <= 0 || p.Hz <= 0 {
		return 0
	}
	scale, _, _ := unitOf(p.Unit)
	return scale / float64(p.Hz) / p.Work
}

// flameFrame is a frame of a series' (a) and the reference's (b) merged
// stacks: their samples through it, and the frames it called.
type flameFrame struct {
	name string
	a, b uint64
	kids map[string]*flameFrame
}

func (f *flameFrame) add(stacks record.Stacks, ref bool) {
	for _, stack := range slices.Sorted(maps.Keys(stacks)) {
		n, node := stacks[stack], f
		frames := strings.Split(stack, ";")
		for i := 0; ; i++ {
			if ref {
				node.b += n
			} else {
				node.a += n
			}
			if i == len(frames) || i == flameMaxDepth {
				break
			}
			next := node.kids[frames[i]]
			if next == nil {
				next = &flameFrame{name: frames[i], kids: map[string]*flameFrame{}}
				node.kids[frames[i]] = next
			}
			node = next
		}
	}
}

// flameScale turns a frame into what a graph draws: its width, its fill
// and its tooltip.
type flameScale struct {
	width   func(*flameFrame) float64
	fill    func(f *flameFrame, depth int) color.NRGBA
	tooltip func(*flameFrame) string
}

// node bounds the tree at root and makes it the figure's: a frame is
// drawn when its width is at least flameMinShare of the root's and among
// the flameMaxFrames widest (a callee is never wider than its caller, so
// what is drawn hangs together).
func (s flameScale) node(root *flameFrame) *figure.FlameNode {
	var widths []float64
	var walk func(*flameFrame)
	walk = func(f *flameFrame) {
		widths = append(widths, s.width(f))
		for _, k := range f.kids {
			walk(k)
		}
	}
	walk(root)
	cut := flameMinShare * s.width(root)
	if len(widths) > flameMaxFrames {
		slices.SortFunc(widths, func(x, y float64) int { return cmp.Compare(y, x) })
		cut = max(cut, math.Nextafter(widths[flameMaxFrames], math.Inf(1)))
	}
	var build func(f *flameFrame, depth int) *figure.FlameNode
	build = func(f *flameFrame, depth int) *figure.FlameNode {
		n := &figure.FlameNode{Name: f.name, Value: s.width(f), Tooltip: s.tooltip(f), Fill: s.fill(f, depth)}
		for _, name := range slices.Sorted(maps.Keys(f.kids)) {
			if k := f.kids[name]; s.width(k) >= cut {
				n.Children = append(n.Children, build(k, depth+1))
			}
		}
		return n
	}
	return build(root, 0)
}

// flameHue is a frame's colour in a series' own graph, as flamegraph.pl
// paints them: what the sample ran in grey-blue, kernel frames orange,
// user frames yellow to red, varied by the name's hash so neighbours
// differ and the same frame looks alike in every graph.
func flameHue(f *flameFrame, depth int) color.NRGBA {
	h := fnv.New32a()
	h.Write([]byte(f.name))
	v := float64(h.Sum32()%1000) / 1000
	switch {
	case depth == 0:
		return color.NRGBA{0xd8, 0xd8, 0xd8, 0xff}
	case depth == 1:
		return color.NRGBA{uint8(150 + 40*v), uint8(170 + 40*v), 0xe0, 0xff}
	case strings.HasSuffix(f.name, record.KernelFrame):
		return color.NRGBA{0xf0, uint8(120 + 60*v), uint8(40 * v), 0xff}
	}
	return color.NRGBA{0xf5, uint8(180 + 60*v), uint8(50 + 40*v), 0xff}
}

// cpuText is a frame's CPU per unit of work, or "" where there is none.
func cpuText(samples uint64, p SeriesProfile) string {
	if p.perUnit() == 0 {
		return ""
	}
	_, text, _ := unitOf(p.Unit)
	return ", " + textSig(float64(samples)*p.perUnit(), 0) + " " + text
}

// seriesFlame is a profiled series as the report names it.
type seriesFlame struct {
	name string
	p    SeriesProfile
}

// addFlames draws, for every series of every run whose cells were
// profiled, its flame graph and, beside the reference (the mode ref of
// the first run that has it), a differential one. Runs without profiling
// add nothing, so their reports stay as they were.
func (r *Report) addFlames(ref string) {
	var all []seriesFlame
	base := -1
	for _, run := range r.Runs {
		ps, notes := Profiles(run)
		r.Notes = append(r.Notes, notes...)
		for _, p := range ps {
			if base < 0 && p.Series == ref {
				base = len(all)
			}
			all = append(all, seriesFlame{seriesName(r.Runs, run, p.Series), p})
		}
	}
	for i, d := range all {
		r.addFlame(i, d)
		if base >= 0 && i != base {
			r.addFlameDiff(i, d, all[base])
		}
	}
}

// addFlame draws a series' flame graph.
func (r *Report) addFlame(i int, d seriesFlame) {
	root := &flameFrame{name: "all", kids: map[string]*flameFrame{}}
	root.add(d.p.Stacks, false)
	total := float64(d.p.Samples)
	s := flameScale{
		width: func(f *flameFrame) float64 { return float64(f.a) },
		fill:  flameHue,
		tooltip: func(f *flameFrame) string {
			return fmt.Sprintf("%s\nsamples: %d, %.2f %% of %s's%s", f.name, f.a, 100*float64(f.a)/total, d.name, cpuText(f.a, d.p))
		},
	}
	unit := "Widths are shares of its samples (its cells recorded no one unit of work)"
	if d.p.perUnit() > 0 {
		_, _, work := unitOf(d.p.Unit)
		unit = fmt.Sprintf("Widths are shares of its samples; all of them, idle and other work included, come to %s (%s)", cpuText(d.p.Samples, d.p)[2:], fmt.Sprintf(work, textSig(d.p.Work, 0)))
	}
	caption := fmt.Sprintf("Where the machine's CPUs went while %s's %d profiled cells ran: their sampled stacks merged (%d samples), "+
		"the root's children what each sample ran (server, client, router, a daemon, other, idle), each frame above its caller. %s. "+
		"Frames below %.1f %% of the graph or beyond its %d widest are drawn as their caller's own time; hover over a frame for its samples.",
		d.name, d.p.Cells, d.p.Samples, unit, 100*flameMinShare, flameMaxFrames)
	r.addChart(fmt.Sprintf("fig-flame-%d", i), "Flame graph: "+d.name, caption, figure.Flame{Root: s.node(root)})
}

// addFlameDiff draws a series' differential flame graph against the
// reference's (Brendan Gregg's): both sides' stacks in one tree, each
// frame as wide as the mean of the two sides' CPU per unit of work (shares
// of samples where they share no unit), red where the series spends
// more than the reference, blue where less, the deeper the larger the
// change; frames only one side ran are drawn too.
func (r *Report) addFlameDiff(i int, d, ref seriesFlame) {
	root := &flameFrame{name: "all", kids: map[string]*flameFrame{}}
	root.add(d.p.Stacks, false)
	root.add(ref.p.Stacks, true)
	_, unit, _ := unitOf(d.p.Unit)
	ka, kb := d.p.perUnit(), ref.p.perUnit()
	if ka == 0 || kb == 0 || d.p.Unit != ref.p.Unit {
		ka, kb, unit = 100/float64(d.p.Samples), 100/float64(ref.p.Samples), "% of samples"
	}
	change := func(f *flameFrame) float64 { return float64(f.a)*ka - float64(f.b)*kb }
	var most float64
	var walk func(*flameFrame)
	walk = func(f *flameFrame) {
		most = max(most, math.Abs(change(f)))
		for _, k := range f.kids {
			walk(k)
		}
	}
	walk(root)
	s := flameScale{
		width: func(f *flameFrame) float64 { return (float64(f.a)*ka + float64(f.b)*kb) / 2 },
		fill: func(f *flameFrame, _ int) color.NRGBA {
			c := change(f)
			fade := uint8(235 - 235*math.Abs(c)/max(most, math.SmallestNonzeroFloat64))
			if c >= 0 {
				return color.NRGBA{0xff, fade, fade, 0xff}
			}
			return color.NRGBA{fade, fade, 0xff, 0xff}
		},
		tooltip: func(f *flameFrame) string {
			return fmt.Sprintf("%s\n%s: %s %s (samples: %d)\n%s: %s %s (samples: %d)\nchange %s %s",
				f.name, d.name, textSig(float64(f.a)*ka, 0), unit, f.a, ref.name, textSig(float64(f.b)*kb, 0), unit, f.b, fmt.Sprintf("%+.*f", sigPrec(change(f), 0), change(f)), unit)
		},
	}
	caption := fmt.Sprintf("%s against %s, as Brendan Gregg's differential flame graphs: both series' stacks in one tree, each frame as wide as "+
		"the mean of its %s in the two, red where %s spends more, blue where less, the deeper the larger the change (the largest, %s %s, deepest); "+
		"frames only one series ran are drawn too. Hover over a frame for both sides.", d.name, ref.name, unit, d.name, textSig(most, 0), unit)
	r.addChart(fmt.Sprintf("fig-flamediff-%d", i), "Differential flame graph: "+d.name+" against "+ref.name, caption, figure.Flame{Root: s.node(root)})
}
