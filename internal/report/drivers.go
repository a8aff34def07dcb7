package report

import (
	"fmt"
	"io"
	"math"

	"github.com/cnperf/cnperf/internal/analysis"
)

// driversSection marks the tables the page shows under "Drivers" (the
// template in html.go names it too).
const driversSection = "drivers"

// runDrivers is one run's driver comparison.
type runDrivers struct {
	label string
	rows  []analysis.DriverRow
}

// DataDriverRow is one metric of one mode on two drivers, in tables.json.
type DataDriverRow struct {
	Run            string `json:"run"`
	Case           string `json:"case,omitempty"`
	Mode           string `json:"mode"`
	Metric         string `json:"metric"`
	Title          string `json:"title"`
	Unit           string `json:"unit"`
	HigherIsBetter bool   `json:"higher_is_better"`
	Base           string `json:"base_driver"`
	Other          string `json:"other_driver"`
	BaseValue      Num    `json:"base_value"`
	OtherValue     Num    `json:"other_value"`
	Ratio          Num    `json:"ratio"` // other / base
}

// DriverRows compares a run's modes across its drivers with the numbers of
// its summary, read from its cases (analysis.Drivers): ping-pong's
// headline medians and ratios over like sizes
// (analysis.Sweep, as `cnperf summary` prints them), or each other
// case's headline mean. It is nil for a run on a single driver.
func DriverRows(run Run, same float64) []analysis.DriverRow {
	keys := run.Meta.SeriesKeys()
	pairs := analysis.DriverPairs(keys, run.Meta.SplitSeries)
	if len(pairs) == 0 {
		return nil
	}
	// This run alone, so the cases' series are its plain mode keys.
	return analysis.Drivers(RunCases(run, "", same), pairs)
}

// addDrivers adds a table per run and pair of drivers comparing each mode
// on the run's first driver with the same mode on another.
func (r *Report) addDrivers(o Options) {
	for ri, run := range r.Runs {
		rows := DriverRows(run, o.Same)
		if len(rows) == 0 {
			continue
		}
		r.drivers = append(r.drivers, runDrivers{label: run.Label, rows: rows})
		suffix, idSuffix := runSuffix(r.Runs, ri)
		groups := analysis.GroupByDrivers(rows)
		for _, g := range groups {
			id := "tab-drivers" + idSuffix
			if len(groups) > 1 {
				id += "-" + g[0].Other
			}
			r.Tables = append(r.Tables, driverTable(run, id, suffix, g, o))
		}
	}
}

// driverTable draws rows of one pair of drivers of run.
func driverTable(run Run, id, suffix string, rows []analysis.DriverRow, o Options) Table {
	repeats := !run.Sweeps()
	base, other := rows[0].Base, rows[0].Other
	ratio := other + " ÷ " + base
	// The values are the summary's, so say which: the per-request rate of
	// the summary tables is a different figure from the rate per cell.
	values := "Medians over successful requests; requests per second: median over the mode's cells, as cnperf summary prints them. The ratio compares like message sizes: the median over size groups (each measured size, or groups of equally many sizes) of the groups' medians' ratio (requests per second: over the chunks of sizes both ran), so it may differ from the quotient of the two medians where one side measured other sizes."
	if repeats {
		values = "Each test's headline metric: its mean over the repetitions."
	}
	t := Table{ID: id, Title: fmt.Sprintf("Drivers: %s against %s%s", other, base, suffix), Section: driversSection,
		Caption: fmt.Sprintf("The same mode %s and %s, side by side in one run. %s near 1 means cnperf's netns datapath matches Docker's; green where %s does better, red where worse, grey within %g %%. %s",
			driverWords(run, base), driverWords(run, other), ratio, other, o.Same, values),
		Columns: []string{"mode", "metric", "on " + base, "on " + other, ratio}}
	if repeats {
		t.Columns = append([]string{"test"}, t.Columns...)
	}
	for _, d := range rows {
		cells := []Cell{{Text: d.Mode}, {Text: d.Title + " (" + d.Unit + ")"}, value(d.BaseValue),
			value(d.OtherValue), driverRatioCell(d, o.Same)}
		if repeats {
			cells = append([]Cell{{Text: d.Case}}, cells...)
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// driverWords says how a driver builds a mode, for the caption, as the
// run's record of a lab it built says (Lab.Built).
func driverWords(run Run, d string) string {
	for _, mm := range run.Meta.Modes {
		if mm.Driver == d && mm.Lab != nil {
			return mm.Lab.Built(d)
		}
	}
	return "on " + d
}

// driverRatioCell colours the other driver's ratio by the metric's
// direction: there is no reference row, so no cell is "ref".
func driverRatioCell(d analysis.DriverRow, same float64) Cell {
	if math.IsNaN(d.Ratio) {
		return Cell{Text: "–"}
	}
	return Cell{Text: f(d.Ratio, 2), Class: ratioClass(d.Ratio, same, d.HigherIsBetter)}
}

// driverData is the comparison for tables.json.
func driverData(runs []runDrivers) []DataDriverRow {
	var out []DataDriverRow
	for _, rd := range runs {
		for _, d := range rd.rows {
			out = append(out, DataDriverRow{Run: rd.label, Case: d.Case, Mode: d.Mode, Metric: d.Metric, Title: d.Title, Unit: d.Unit,
				HigherIsBetter: d.HigherIsBetter, Base: d.Base, Other: d.Other, BaseValue: Num(d.BaseValue), OtherValue: Num(d.OtherValue), Ratio: Num(d.Ratio)})
		}
	}
	return out
}

// writeDriverSummary prints each run's comparison for the text summary,
// naming the run when several are compared.
func (r *Report) writeDriverSummary(w io.Writer) error {
	for _, rd := range r.drivers {
		if len(r.Runs) > 1 {
			if _, err := fmt.Fprintf(w, "\nrun %s:\n", rd.label); err != nil {
				return fmt.Errorf("driver summary of %s: %w", rd.label, err)
			}
		}
		if err := WriteDriverTable(w, rd.rows); err != nil {
			return fmt.Errorf("driver summary of %s: %w", rd.label, err)
		}
	}
	return nil
}
