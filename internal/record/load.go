package record

import (
	"fmt"
	"strconv"
)

// CellLoad is what the machine did besides the run while one cell ran:
// CPU time of processes outside the run, and time the hypervisor took
// (steal). Runs written before it was recorded have none, and are judged
// undisturbed.
type CellLoad struct {
	// CPUSeconds is the machine's CPU capacity over the cell: wall time
	// × CPUs (every column of /proc/stat's cpu line but guest).
	CPUSeconds float64 `json:"cpu_seconds"`
	// BusySeconds is the time processes used: user, nice and system.
	BusySeconds float64 `json:"busy_seconds"`
	// RunSeconds is the run's own processes' share of it, OutsideSeconds
	// the rest (at least 0), OutsidePercent that of CPUSeconds. All three
	// are absent when some of the run's processes are out of cnperf's
	// sight (pods on a cluster, containers of an existing engine).
	RunSeconds     *float64 `json:"run_seconds,omitempty"`
	OutsideSeconds *float64 `json:"outside_seconds,omitempty"`
	OutsidePercent *float64 `json:"outside_percent,omitempty"`
	StealSeconds   float64  `json:"steal_seconds"`
	StealPercent   float64  `json:"steal_percent"` // of CPUSeconds
}

// The limits of a quiet machine. Outside work on 10 % of the CPU is one
// busy core in ten, or a quarter of a core on a 2-core VM, about what a
// desktop's idle chatter stays under and what the busy runs that moved
// every ratio by 5–20 % were far above (40 % and more). Steal is tighter:
// the hypervisor takes whole time slices at once, which lands as a delay
// on whichever request was in flight. A run is disturbed when, over its
// cells, either share passes its limit; or when at least a quarter of its
// stretches (and two or more) pass one each: a burst over a few rounds
// hits only the modes that ran then, and a median stands only as long as
// under half its cells are off.
//
// /proc/stat counts in ticks of 10 ms and charges each to what ran then,
// so a share is a sample of ticks: over 100 ticks (one CPU-second) it is
// known to about ±5 %, over 500 to about ±2 %. So cells are judged in
// stretches: consecutive cells taken together until they hold
// StretchCPUSeconds of capacity (one cell of a second, or a few dozen of
// ping-pong's short ones). A run whose cells add up to less than
// MinRunCPUSeconds (a smoke test of a few milliseconds a cell) is not
// judged at all.
const (
	OutsideLimit        = 10.0 // percent of the machine's CPU
	StealLimit          = 5.0  // percent of the machine's CPU
	DisturbedCellsShare = 0.25 // share of the stretches past a limit
	StretchCPUSeconds   = 1.0  // capacity (wall time × CPUs) of a stretch of cells
	MinRunCPUSeconds    = 5.0  // capacity over all cells of a run judged at all
)

// Disturbance sums the cells' loads of a run.
type Disturbance struct {
	Cells        int     // cells with a load record
	CPUSeconds   float64 // their capacity, summed
	Outside      float64 // percent of the machine's CPU over those cells (OutsideKnown)
	OutsideKnown bool
	Steal        float64 // percent of the machine's CPU over those cells
	Stretches    int     // stretches of cells of StretchCPUSeconds (a last, shorter one is left out)
	Past         int     // stretches past a limit
	Disturbed    bool
}

// usable says whether a stored load can be summed: present, with a
// capacity, and no count negative or past what any machine runs (a
// run.json edited by hand, or damaged, is read as far as it makes sense).
func (l *CellLoad) usable() bool {
	if l == nil || !(l.CPUSeconds > 0 && l.CPUSeconds < 1e12) {
		return false
	}
	ok := func(v float64) bool { return v >= 0 && v <= l.CPUSeconds }
	return ok(l.StealSeconds) && (l.OutsideSeconds == nil || ok(*l.OutsideSeconds))
}

// loadSum adds up cells' loads.
type loadSum struct{ cpu, cpuKnown, outside, steal float64 }

func (s *loadSum) add(l *CellLoad) {
	s.cpu += l.CPUSeconds
	s.steal += l.StealSeconds
	if l.OutsideSeconds != nil {
		s.cpuKnown += l.CPUSeconds
		s.outside += *l.OutsideSeconds
	}
}

// shares are the sum's outside work (when known) and steal, in percent.
func (s loadSum) shares() (outside float64, known bool, steal float64) {
	if s.cpuKnown > 0 {
		outside, known = 100*s.outside/s.cpuKnown, true
	}
	if s.cpu > 0 {
		steal = 100 * s.steal / s.cpu
	}
	return outside, known, steal
}

func (s loadSum) past() bool {
	o, _, st := s.shares()
	return o > OutsideLimit || st > StealLimit
}

// Disturbance judges whether the machine was busy while the run measured.
func (m *Meta) Disturbance() Disturbance {
	var d Disturbance
	var all, stretch loadSum
	for _, c := range m.Cells {
		l := c.Load
		if !l.usable() {
			continue
		}
		d.Cells++
		all.add(l)
		stretch.add(l)
		if stretch.cpu >= StretchCPUSeconds {
			d.Stretches++
			if stretch.past() {
				d.Past++
			}
			stretch = loadSum{}
		}
	}
	d.CPUSeconds = all.cpu
	d.Outside, d.OutsideKnown, d.Steal = all.shares()
	if all.cpu < MinRunCPUSeconds {
		return d // too few ticks to tell
	}
	d.Disturbed = d.Outside > OutsideLimit || d.Steal > StealLimit ||
		(d.Past >= 2 && float64(d.Past) >= DisturbedCellsShare*float64(d.Stretches))
	return d
}

// Why says in one phrase what the cells measured against the limits:
// "work outside the run took 23.4 % of the machine's CPU (limit 10 %),
// steal 0.1 % (limit 5 %), past a limit in 14 of 16 stretches of cells".
func (d Disturbance) Why() string {
	pct := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " %" }
	lim := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) + " %" }
	s := ""
	if d.OutsideKnown {
		s = fmt.Sprintf("work outside the run took %s of the machine's CPU (limit %s), ", pct(d.Outside), lim(OutsideLimit))
	}
	s += fmt.Sprintf("steal %s (limit %s), past a limit in %d of %d stretches of cells", pct(d.Steal), lim(StealLimit), d.Past, d.Stretches)
	return s
}

// Warning is the line summary and report print for a disturbed run, "" for
// one that was not (or recorded no load).
func (d Disturbance) Warning() string {
	if !d.Disturbed {
		return ""
	}
	return "the machine was busy during this run: " + d.Why() +
		"; a busy machine moves every ratio (see \"A quiet machine\" in docs/report.md)"
}
