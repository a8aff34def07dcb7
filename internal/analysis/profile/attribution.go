package profile

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// Input is one run (or one view of a run: its ping-pong or its tests) as
// the attribution reads it.
type Input struct {
	Dir  string
	Meta record.Meta
	// Obs are the socket tests' cells as the cases read them (their
	// transactions per second and bytes moved); none for a sweep of
	// message sizes, whose every sample is one request.
	Obs   []analysis.Observation
	RefOf analysis.RefOf
	Map   *Map
}

// Row kinds: a part of the path, a sum or total, where the samples ran.
const (
	KindPart = iota
	KindTotal
	KindWhere
)

// Row is one line of a table: per series, the CPU per unit of work over
// its profiled cells (mean and 95 % interval), and against its reference
// the mean of the paired cells' differences with its interval.
type Row struct {
	Name   string
	Kind   int
	Values map[string]analysis.MeanCI
	Diffs  map[string]analysis.DiffInterval
}

// Table is one case's attribution (a sweep of message sizes is one case).
type Table struct {
	Case  string
	PerGB bool // CPU seconds per GB moved; else µs per request
	// Series are those with profiled cells, in the run's order; Refs,
	// each one's reference where that has profiled cells too.
	Series []string
	Refs   map[string]string
	Cells  map[string]int
	Rows   []Row
}

// The rows that follow the parts, in this order.
const (
	rowNamed  = "named parts, sum"
	rowTotal  = "total sampled (all but idle)"
	rowKernel = "total, kernel's count (/proc/stat)"
	rowGap    = "sampled − kernel's count"
)

// places are where a sample ran, in the order tables list them.
var places = []string{record.StackServer, record.StackClient, record.StackRouter, record.StackDelayline, InDaemons, InSoftirq}

// cellValues is one profiled cell's rows, per unit of its work.
type cellValues struct {
	series, kase    string
	instance, chunk int
	perGB           bool
	v               map[string]float64
}

// Attribute reads the stacks of the run's profiled cells and attributes
// their CPU per case and series. A cell without a profile, without work
// (no transaction or byte counted) or unfinished is left out; a run with
// no profiled cell gives none. A stacks file that cannot be read fails.
func Attribute(in Input) ([]Table, error) {
	work := map[int]analysis.Observation{}
	for _, o := range in.Obs {
		work[o.Cell] = o
	}
	var cells []cellValues
	for _, c := range in.Meta.Cells {
		p := c.Profile
		if p == nil || p.Hz <= 0 || c.Error != "" {
			continue
		}
		wall := c.End.Sub(c.Start).Seconds()
		window := p.Seconds
		if !(window > 0) {
			window = wall
		}
		// The work's rate over the cell, as the kernel-time table takes
		// it: transactions per second, bytes over the cell, or (ping-pong)
		// requests over the cell.
		var rate float64
		perGB := false
		if o, ok := work[c.Index]; ok {
			if t := o.Values["trans_per_s"]; t > 0 {
				rate = t
			} else if o.Moved > 0 && wall > 0 {
				rate, perGB = float64(o.Moved)/wall, true
			}
		} else if in.Obs == nil && c.Case == "" && wall > 0 {
			rate = float64(c.Samples) / wall
		}
		if !(rate > 0) || !(window > 0) {
			continue
		}
		// Per unit: µs per request, or CPU s per GB.
		scale := 1e6 / rate
		if perGB {
			scale = 1e9 / rate
		}
		// The file is the cell's own: a run.json names nothing else to read.
		if p.File != filepath.ToSlash(record.StacksFile(c.Index)) {
			return nil, fmt.Errorf("cell %d's stacks: file %q, not %s", c.Index, p.File, filepath.ToSlash(record.StacksFile(c.Index)))
		}
		stacks, err := record.ReadStacks(filepath.Join(in.Dir, record.StacksFile(c.Index)))
		if err != nil {
			return nil, fmt.Errorf("cell %d's stacks: %w", c.Index, err)
		}
		parts, at := in.Map.Attribute(stacks)
		per := func(n uint64) float64 { return float64(n) / float64(p.Hz) / window * scale }
		v := map[string]float64{}
		var named, total uint64
		for _, name := range in.Map.Parts() {
			v[name] = per(parts[name])
			named += parts[name]
		}
		total = named + parts[Other] + parts[Outside]
		v[Other], v[Outside], v[rowNamed], v[rowTotal] = per(parts[Other]), per(parts[Outside]), per(named), per(total)
		if k := c.Kernel; k != nil && k.Sane() && wall > 0 {
			v[rowKernel] = (k.UserSeconds + k.SystemSeconds + k.IRQSeconds + k.SoftirqSeconds) / wall * scale
			v[rowGap] = v[rowTotal] - v[rowKernel]
		}
		for _, w := range places {
			v["in "+w] = per(at[w])
		}
		cells = append(cells, cellValues{series: c.Mode, kase: c.Case, instance: c.Instance, chunk: c.Chunk, perGB: perGB, v: v})
	}
	return tables(in, cells), nil
}

// tables groups the cells' values by case and series.
func tables(in Input, cells []cellValues) []Table {
	var out []Table
	var cases []string
	for _, c := range cells {
		if !slices.Contains(cases, c.kase) {
			cases = append(cases, c.kase)
		}
	}
	rows := slices.Concat(in.Map.Parts(), []string{rowNamed, Other, Outside, rowTotal, rowKernel, rowGap})
	for _, w := range places {
		rows = append(rows, "in "+w)
	}
	for _, k := range cases {
		t := Table{Case: k, Refs: map[string]string{}, Cells: map[string]int{}}
		type unit struct{ instance, chunk int }
		by := map[string]map[unit]map[string]float64{}
		var units []unit // in the order the cells ran, for sums that do not vary
		for _, c := range cells {
			if c.kase != k {
				continue
			}
			if by[c.series] == nil {
				by[c.series] = map[unit]map[string]float64{}
			}
			u := unit{c.instance, c.chunk}
			if !slices.Contains(units, u) {
				units = append(units, u)
			}
			by[c.series][u] = c.v
			t.Cells[c.series]++
			t.PerGB = t.PerGB || c.perGB
		}
		for _, s := range in.Meta.SeriesKeys() {
			if by[s] != nil {
				t.Series = append(t.Series, s)
			}
		}
		for _, s := range t.Series {
			if ref := in.RefOf(s); ref != s && by[ref] != nil {
				t.Refs[s] = ref
			}
		}
		for i, name := range rows {
			kind := KindPart
			if i >= len(in.Map.Parts()) {
				kind = KindTotal
			}
			if i >= len(rows)-len(places) {
				kind = KindWhere
			}
			r := Row{Name: name, Kind: kind, Values: map[string]analysis.MeanCI{}, Diffs: map[string]analysis.DiffInterval{}}
			seen := false
			for _, s := range t.Series {
				var xs []float64
				for _, u := range units {
					if x, ok := by[s][u][name]; ok {
						xs = append(xs, x)
						seen = seen || x != 0
					}
				}
				m := analysis.MeanInterval(xs)
				if name != rowGap && m.Lo < 0 {
					m.Lo = 0 // a time cannot be negative
				}
				r.Values[s] = m
				ref, ok := t.Refs[s]
				if !ok {
					continue
				}
				var us []analysis.PairedUnit
				for _, u := range units {
					x, okX := by[s][u][name]
					y, okY := by[ref][u][name]
					if okX && okY {
						us = append(us, analysis.PairedUnit{Instance: u.instance, Unit: u.chunk, Mode: x, Ref: y})
					}
				}
				r.Diffs[s] = analysis.DiffOf(us)
			}
			// A part no series sampled says nothing; the totals always show.
			if seen || kind == KindTotal && name != rowKernel && name != rowGap {
				t.Rows = append(t.Rows, r)
			}
		}
		out = append(out, t)
	}
	return out
}
