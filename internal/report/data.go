package report

import (
	"math"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/analysis"
)

// Num is a number in tables.json; NaN and infinities become null.
type Num float64

// MarshalJSON writes null for what JSON cannot hold.
func (n Num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// Data is tables.json: the numbers the page shows, for scripts.
type Data struct {
	Generated  time.Time                        `json:"generated"`
	Runs       []DataRun                        `json:"runs"`
	Series     []string                         `json:"series"`
	Reference  string                           `json:"reference"`
	Window     int                              `json:"tcp_receive_window"`
	SplitBytes int                              `json:"split_bytes"`
	Metrics    []DataMetric                     `json:"metrics"`
	Summary    map[string][]DataSummary         `json:"summary"`   // by metric key
	SmallBig   map[string][]DataSplit           `json:"small_big"` // by metric key
	Deviation  []DataDeviation                  `json:"deviation"` // transfer rate
	Loss       map[string]map[string][]DataLoss `json:"loss"`      // metric key → series → bins
	Impacts    []DataImpact                     `json:"impacts"`   // transfer rate
	Cases      []DataCase                       `json:"sockets,omitempty"`
	Drivers    []DataDriverRow                  `json:"drivers,omitempty"`   // modes on two drivers, when a run compares drivers
	Intervals  []DataInterval                   `json:"intervals,omitempty"` // ratios to the reference with their 95 % intervals
	Notes      []string                         `json:"notes"`
	Warnings   []string                         `json:"warnings,omitempty"` // runs measured on a busy machine
}

// DataCase is one case's statistics per series over its repetitions.
type DataCase struct {
	Label    string        `json:"label"`
	Workload string        `json:"workload"`
	Param    string        `json:"param,omitempty"`
	Value    string        `json:"value,omitempty"`
	Metrics  []DataMetric  `json:"metrics"`
	Rows     []DataCaseRow `json:"rows"`
}

type DataCaseRow struct {
	Series string                  `json:"series"`
	N      int                     `json:"repetitions"`
	Stats  map[string]DataCaseStat `json:"stats"` // by metric key
}

type DataCaseStat struct {
	N    int      `json:"n"`
	Min  DataStat `json:"min"`
	Max  DataStat `json:"max"`
	Mean DataStat `json:"mean"`
	SD   DataStat `json:"sd"`
}

func caseData(cases []analysis.Case) []DataCase {
	var out []DataCase
	for _, c := range cases {
		dc := DataCase{Label: c.Label, Workload: c.Workload, Param: c.Param, Value: c.Value}
		for _, m := range c.Metrics {
			dc.Metrics = append(dc.Metrics, DataMetric{Key: m.Key, Title: m.Title, Unit: m.Unit, HigherIsBetter: m.HigherIsBetter})
		}
		for _, row := range c.Rows {
			dr := DataCaseRow{Series: row.Series, N: row.N, Stats: map[string]DataCaseStat{}}
			for k, st := range row.Stats {
				dr.Stats[k] = DataCaseStat{N: st.N, Min: stat(st.Min), Max: stat(st.Max), Mean: stat(st.Mean), SD: stat(st.SD)}
			}
			dc.Rows = append(dc.Rows, dr)
		}
		out = append(out, dc)
	}
	return out
}

type DataRun struct {
	Dir     string   `json:"dir"`
	Label   string   `json:"label"`
	Status  string   `json:"status"`
	Modes   []string `json:"modes"`
	Samples int      `json:"samples"`
}

type DataMetric struct {
	Key            string `json:"key"`
	Title          string `json:"title"`
	Unit           string `json:"unit"`
	HigherIsBetter bool   `json:"higher_is_better"`
}

type DataStat struct {
	Value   Num    `json:"value"`
	Percent Num    `json:"percent_vs_reference"`
	Class   string `json:"class"`
}

type DataSummary struct {
	Series string   `json:"series"`
	N      int      `json:"n"`
	Min    DataStat `json:"min"`
	Max    DataStat `json:"max"`
	Mean   DataStat `json:"mean"`
	Median DataStat `json:"median"`
	SD     DataStat `json:"sd"`
	P5     DataStat `json:"p5"`
	P95    DataStat `json:"p95"`
}

// DataSplit is one series' small/big split: samples on each side, and the
// median over the size groups both series have of the ratio of the groups'
// medians, with the number of those groups (named bins in the JSON).
type DataSplit struct {
	Series    string `json:"series"`
	SmallN    int    `json:"small_n"`
	Small     Num    `json:"small_ratio"`
	SmallBins int    `json:"small_bins"`
	BigN      int    `json:"big_n"`
	Big       Num    `json:"big_ratio"`
	BigBins   int    `json:"big_bins"`
}

type DataDeviation struct {
	Series  string `json:"series"`
	Samples int    `json:"samples"`
	Bytes   int64  `json:"bytes"`
	Sizes   int    `json:"sizes"`
	MinRSD  Num    `json:"min_rsd_percent"`
	AvgRSD  Num    `json:"avg_rsd_percent"`
	MaxRSD  Num    `json:"max_rsd_percent"`
}

// DataLoss is one size group of a loss line: its smallest and largest
// measured size (equal when the group is one size), the ratio of the
// medians and both series' samples in it.
type DataLoss struct {
	Lo    Num `json:"lo_bytes"`
	Hi    Num `json:"hi_bytes"`
	Ratio Num `json:"ratio"`
	N     int `json:"n"`
	RefN  int `json:"ref_n"`
}

type DataImpact struct {
	Name    string     `json:"name"`
	Formula string     `json:"formula"`
	Over    string     `json:"over"`
	Under   string     `json:"under"`
	Median  Num        `json:"median_ratio"`
	Bins    []DataLoss `json:"bins"`
}

func stat(c analysis.Change) DataStat {
	return DataStat{Value: Num(c.Value), Percent: Num(c.Percent), Class: c.Class}
}

func lossData(bins []analysis.LossBin) []DataLoss {
	out := make([]DataLoss, 0, len(bins))
	for _, b := range bins {
		out = append(out, DataLoss{Lo: Num(b.Lo), Hi: Num(b.Hi), Ratio: Num(b.Ratio), N: b.N, RefN: b.RefN})
	}
	return out
}

func buildData(r *Report, d analysis.Dataset, o Options) Data {
	out := Data{Generated: r.Generated, Series: d.Series, Reference: d.Reference, Window: r.Window, SplitBytes: r.Split,
		Summary: map[string][]DataSummary{}, SmallBig: map[string][]DataSplit{}, Loss: map[string]map[string][]DataLoss{}, Notes: r.Notes}
	for _, run := range r.Runs {
		out.Runs = append(out.Runs, DataRun{Dir: run.Dir, Label: run.Label, Status: run.Meta.Status, Modes: run.Meta.SeriesKeys(), Samples: len(run.PingPong)})
	}
	for _, m := range r.metricsShown {
		out.Metrics = append(out.Metrics, DataMetric{Key: m.Key, Title: m.Title, Unit: m.Unit, HigherIsBetter: m.HigherIsBetter})
		for _, row := range d.Summary(m, o.Same, o.Bins) {
			out.Summary[m.Key] = append(out.Summary[m.Key], DataSummary{Series: row.Series, N: row.N, Min: stat(row.Min), Max: stat(row.Max),
				Mean: stat(row.Mean), Median: stat(row.Median), SD: stat(row.SD), P5: stat(row.P5), P95: stat(row.P95)})
		}
		if d.Reference == "" {
			continue
		}
		if r.Split > 0 {
			for _, row := range d.SmallBig(m, r.Split, o.Bins) {
				out.SmallBig[m.Key] = append(out.SmallBig[m.Key], DataSplit{Series: row.Series, SmallN: row.SmallN, Small: Num(row.Small), SmallBins: row.SmallBins,
					BigN: row.BigN, Big: Num(row.Big), BigBins: row.BigBins})
			}
		}
		out.Loss[m.Key] = map[string][]DataLoss{}
		for _, s := range d.Series {
			if s != d.Reference {
				out.Loss[m.Key][s] = lossData(d.Loss(s, m, o.Bins))
			}
		}
	}
	tm, _ := analysis.MetricByKey("transfer")
	for _, row := range d.Deviation(tm) {
		out.Deviation = append(out.Deviation, DataDeviation{Series: row.Series, Samples: row.Samples, Bytes: row.Bytes, Sizes: row.Sizes,
			MinRSD: Num(row.MinRSD), AvgRSD: Num(row.AvgRSD), MaxRSD: Num(row.MaxRSD)})
	}
	for _, im := range d.Impacts(tm, o.Bins) {
		out.Impacts = append(out.Impacts, DataImpact{Name: im.Name, Formula: im.Formula, Over: im.Over, Under: im.Under, Median: Num(im.Median), Bins: lossData(im.Bins)})
	}
	return out
}
