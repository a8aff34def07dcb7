package analysis

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// UnderLoadParam is the parameter that runs a probe beside a load (rr's
// under_load); its value 0 is the idle probe.
const UnderLoadParam = "under_load"

// MaxLoadPoints bounds a timeline: a probe of a day at 10 ms intervals
// would otherwise give millions of points to a figure.
const MaxLoadPoints = 10000

// UnderLoad is one loaded case of a probe beside its idle case, in one
// series, as flent's RRUL shows them: the probe's percentiles idle and
// loaded, their inflation (loaded ÷ idle) with a 95 % interval over the
// repetitions, the load's throughput, and the loaded case's timeline.
type UnderLoad struct {
	Series string
	Test   int    // the spec's test
	Case   string // the loaded case's label
	Load   string // its under_load value (streams)
	Idle   Probe  // the same test's under_load 0 case; Reps 0 if none ran
	Loaded Probe
	// P50 and P99 are the inflations, loaded ÷ idle, with their 95 %
	// intervals (Welch's on the logarithms of the repetitions' values;
	// NaN bounds with under two repetitions on a side).
	P50, P99 Interval
	LoadBits float64     // the load's mean throughput over its repetitions, bits/s
	Timeline []LoadPoint // the loaded case's intervals, averaged over its repetitions
}

// Probe is a probe case's round-trip percentiles, the means of its
// repetitions' totals, in µs.
type Probe struct {
	P50, P99 float64
	Reps     int
	p50, p99 []float64 // per repetition
}

// LoadPoint is one reporting interval of a probe under load: its end
// (seconds since the clients started, warm-up included), the probe's
// round-trip percentiles in µs and the load's throughput in bits/s (NaN
// where one reported no interval there).
type LoadPoint struct {
	T, P50, P99, Bits float64
}

// rrInterval and streamInterval are the part of rr's and stream's
// interval lines a timeline reads.
type rrInterval struct {
	End     float64 `json:"end_s"`
	Omitted bool    `json:"omitted"`
	P50     float64 `json:"round_trip_p50_us"`
	P99     float64 `json:"round_trip_p99_us"`
}

type streamLine struct {
	Kind   string  `json:"kind"`
	Stream int     `json:"stream"`
	End    float64 `json:"end"`
	Bits   float64 `json:"bits_per_second"`
	Side   string  `json:"side"`
	// The load's end line: the receiver's rate.
	Receiver float64 `json:"receiver_bits_per_second"`
}

// ulCell is what one cell of a probe case recorded.
type ulCell struct {
	series, label, value, param string
	test                        int
	loaded                      bool
	p50, p99                    float64
	total                       bool
	probe                       []rrInterval
	load                        map[string][]streamLine // sum intervals by side
	loadBits                    float64
}

// UnderLoads finds every case that ran beside a load (its cells hold
// KindLoad records) and pairs it with the same test's idle case
// (under_load 0) in the same series. series maps a record's mode to its
// series name. None for a run without a load.
func UnderLoads(recs []record.Record, series func(mode string) string) []UnderLoad {
	cells := map[int]*ulCell{}
	var order []int
	for _, r := range recs {
		c := cells[r.Cell]
		if c == nil {
			c = &ulCell{series: series(r.Mode), label: r.Case, value: r.Value, param: r.Param, test: r.Test, load: map[string][]streamLine{}}
			cells[r.Cell] = c
			order = append(order, r.Cell)
		}
		switch {
		case r.Kind == record.KindLoad:
			c.loaded = true
			var l streamLine
			if json.Unmarshal(r.Data, &l) != nil {
				continue
			}
			switch {
			case l.Kind == "end":
				c.loadBits = l.Receiver
			case l.Kind == "interval" && l.Stream == -1:
				c.load[l.Side] = append(c.load[l.Side], l)
			}
		case r.Workload != "rr":
		case r.Kind == record.KindTotal:
			w, ok := registry.Lookup(r.Workload)
			if !ok {
				continue
			}
			tot, err := w.Total(r.Data)
			if err != nil {
				continue
			}
			c.total, c.p50, c.p99 = true, tot.Values["rtt_p50"], tot.Values["rtt_p99"]
		case r.Kind == "interval":
			var iv rrInterval
			if json.Unmarshal(r.Data, &iv) == nil && len(c.probe) < MaxLoadPoints {
				c.probe = append(c.probe, iv)
			}
		}
	}
	type key struct {
		series string
		test   int
		label  string
	}
	type group struct {
		value string
		cells []*ulCell
	}
	groups := map[key]*group{}
	idle := map[key]*group{} // by series and test; label ""
	var keys []key
	for _, n := range order {
		c := cells[n]
		if !c.total {
			continue
		}
		switch {
		case c.loaded:
			k := key{c.series, c.test, c.label}
			if groups[k] == nil {
				groups[k] = &group{value: c.value}
				keys = append(keys, k)
			}
			groups[k].cells = append(groups[k].cells, c)
		case c.param == UnderLoadParam && c.value == "0":
			k := key{c.series, c.test, ""}
			if idle[k] == nil {
				idle[k] = &group{}
			}
			idle[k].cells = append(idle[k].cells, c)
		}
	}
	out := make([]UnderLoad, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		u := UnderLoad{Series: k.series, Test: k.test, Case: k.label, Load: g.value, Loaded: probeOf(g.cells)}
		if ig := idle[key{k.series, k.test, ""}]; ig != nil {
			u.Idle = probeOf(ig.cells)
		}
		u.P50 = inflation(u.Loaded.p50, u.Idle.p50)
		u.P99 = inflation(u.Loaded.p99, u.Idle.p99)
		var bits []float64
		for _, c := range g.cells {
			if c.loadBits > 0 {
				bits = append(bits, c.loadBits)
			}
		}
		u.LoadBits = stats.Mean(bits)
		u.Timeline = timeline(g.cells)
		out = append(out, u)
	}
	return out
}

func probeOf(cells []*ulCell) Probe {
	var p Probe
	for _, c := range cells {
		p.p50, p.p99 = append(p.p50, c.p50), append(p.p99, c.p99)
	}
	p.P50, p.P99, p.Reps = stats.Mean(p.p50), stats.Mean(p.p99), len(cells)
	return p
}

// inflation is loaded ÷ idle: the ratio of the geometric means of the
// repetitions, with Welch's 95 % interval on their logarithms.
func inflation(loaded, idle []float64) Interval {
	logs := func(xs []float64) []float64 {
		var out []float64
		for _, x := range xs {
			if x > 0 && !bad(x) {
				out = append(out, math.Log(x))
			}
		}
		return out
	}
	a, b := logs(loaded), logs(idle)
	iv := Interval{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Units: min(len(a), len(b))}
	if len(a) == 0 || len(b) == 0 {
		return iv
	}
	d := stats.Mean(a) - stats.Mean(b)
	iv.Ratio = math.Exp(d)
	if len(a) < 2 || len(b) < 2 {
		return iv
	}
	va, vb := sq(stats.StdDev(a))/float64(len(a)), sq(stats.StdDev(b))/float64(len(b))
	v := va + vb
	if v == 0 {
		iv.Lo, iv.Hi = iv.Ratio, iv.Ratio
		return iv
	}
	df := v * v / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	h := t975(df) * math.Sqrt(v)
	iv.Lo, iv.Hi = math.Exp(d-h), math.Exp(d+h)
	return iv
}

func sq(x float64) float64 { return x * x }

// timeline averages the loaded cells' intervals by position: the probe's
// percentiles and the load's throughput (the receiver's where it
// reported, else the sender's), at the probe's interval ends.
func timeline(cells []*ulCell) []LoadPoint {
	n := 0
	for _, c := range cells {
		n = max(n, len(c.probe))
	}
	n = min(n, MaxLoadPoints)
	out := make([]LoadPoint, 0, n)
	for i := range n {
		var t, p50, p99, bits []float64
		for _, c := range cells {
			if i < len(c.probe) {
				t, p50, p99 = append(t, c.probe[i].End), append(p50, c.probe[i].P50), append(p99, c.probe[i].P99)
			}
			side := c.load["receiver"]
			if len(side) == 0 {
				side = c.load["sender"]
			}
			if i < len(side) {
				bits = append(bits, side[i].Bits)
			}
		}
		pt := LoadPoint{T: stats.Mean(t), P50: stats.Mean(p50), P99: stats.Mean(p99), Bits: math.NaN()}
		if len(bits) > 0 {
			pt.Bits = stats.Mean(bits)
		}
		out = append(out, pt)
	}
	return slices.Clip(out)
}
