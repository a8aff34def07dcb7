package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload"
)

// The run's tables as text, for `cnperf summary` and the end of `cnperf
// run`: fixed-width columns a terminal shows aligned.

// headerLine describes a run in one line for `cnperf summary`: its name,
// start, status and what is known of its machine.
func headerLine(meta *record.Meta) string {
	line := fmt.Sprintf("%s  %s  status %s", meta.Spec.Name, meta.Started.Format("2006-01-02 15:04"), meta.Status)
	if m := machineText(meta.Machine); m != "" {
		line += "  " + m
	}
	return line
}

// machineText is "CPU model, N CPUs, kernel K" with what the run does not
// know left out ("" when nothing is: an imported run has no machine).
func machineText(m record.Machine) string {
	var parts []string
	if m.CPUModel != "" {
		parts = append(parts, m.CPUModel)
	}
	if m.CPUs > 0 {
		parts = append(parts, fmt.Sprintf("%d CPUs", m.CPUs))
	}
	if m.Kernel != "" {
		parts = append(parts, "kernel "+m.Kernel)
	}
	return strings.Join(parts, ", ")
}

// WriteSweepTable prints the rows as a fixed-width table.
func WriteSweepTable(w io.Writer, rows []analysis.ModeRow, reference string) error {
	x := "x" + reference
	if reference == "" {
		x = "ratio"
	}
	head := []string{"mode", "samples", "failed", "transfer MB/s", x, "ping->pong ms", x, "siege ms", x, "req/s", x}
	table := [][]string{head}
	for _, r := range rows {
		table = append(table, []string{r.Mode, fmt.Sprint(r.Samples), fmt.Sprint(r.Failed),
			textSig(r.TransferMBs, 1), textSig(r.TransferRatio, 2), textSig(r.InnerMS, 3), textSig(r.InnerRatio, 2),
			textSig(r.LatencyMS, 3), textSig(r.LatencyRatio, 2), textSig(r.RPS, 0), textSig(r.RPSRatio, 2)})
	}
	widths := make([]int, len(head))
	for _, row := range table {
		for i, c := range row {
			widths[i] = max(widths[i], len(c))
		}
	}
	var sb strings.Builder
	for _, row := range table {
		for i, c := range row {
			if i == 0 {
				fmt.Fprintf(&sb, "%-*s", widths[i], c)
			} else {
				fmt.Fprintf(&sb, "  %*s", widths[i], c)
			}
		}
		sb.WriteString("\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// WriteFailedSizes says, under the table, for each mode with message
// sizes whose every request failed, how many and which (the first few):
// those sizes are missing from the mode's curves and ratios.
func WriteFailedSizes(w io.Writer, rows []analysis.ModeRow) error {
	const shown = 5
	for _, r := range rows {
		n := len(r.FailedSizes)
		if n == 0 {
			continue
		}
		list := make([]string, 0, shown+1)
		for _, size := range r.FailedSizes[:min(n, shown)] {
			list = append(list, fmt.Sprint(size))
		}
		if n > shown {
			list = append(list, "...")
		}
		noun := "sizes"
		if n == 1 {
			noun = "size"
		}
		if _, err := fmt.Fprintf(w, "%s: every request failed for %d message %s (%s): missing from its curves and ratios\n", r.Mode, n, noun, strings.Join(list, ", ")); err != nil {
			return err
		}
	}
	return nil
}

func textNum(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// WriteInstanceTable prints each mode's transfer ratio per lab instance
// and their spread; nothing when the run had one instance.
func WriteInstanceTable(w io.Writer, rows []analysis.InstanceRow) error {
	t := cellTable{heading: "transfer rate against the reference per lab instance (median over like chunks)", cols: []string{"mode"}}
	if len(rows) > 0 {
		for i := range rows[0].Ratios {
			t.cols = append(t.cols, fmt.Sprintf("instance %d", i))
		}
	}
	t.cols = append(t.cols, "spread")
	for _, r := range rows {
		row := []string{r.Mode}
		for _, x := range r.Ratios {
			row = append(row, textNum(x, 3))
		}
		spread := "-"
		if !math.IsNaN(r.Spread) {
			spread = fmt.Sprintf("%.1f %%", 100*r.Spread)
		}
		t.rows = append(t.rows, append(row, spread))
	}
	return t.write(w)
}

// WriteCaseTables prints one table per case: per series the mean ± SD
// over repetitions of each summary metric, and its change against ref.
func WriteCaseTables(w io.Writer, cases []analysis.Case, ref string) error {
	var sb strings.Builder
	for i, c := range cases {
		if i > 0 {
			sb.WriteString("\n")
		}
		ms := c.SummaryMetrics()
		reps := 0
		for _, r := range c.Rows {
			reps = max(reps, r.N)
		}
		fmt.Fprintf(&sb, "%s (%d repetition(s); mean ± SD", c.Label, reps)
		if ref != "" {
			fmt.Fprintf(&sb, ", %% against %s", ref)
			if slices.ContainsFunc(ms, func(m workload.Metric) bool { return m.Count }) {
				sb.WriteString("; counts: difference")
			}
		}
		sb.WriteString(")\n")
		head := []string{"mode"}
		for _, m := range ms {
			head = append(head, m.Short)
		}
		table := [][]string{head}
		for _, r := range c.Rows {
			row := []string{r.Series}
			for _, m := range ms {
				st := r.Stats[m.Key]
				cell := textNum(st.Mean.Value, textPrec(st.Mean.Value))
				if !math.IsNaN(st.SD.Value) {
					cell += " ±" + textNum(st.SD.Value, textPrec(st.SD.Value))
				}
				switch {
				case st.Mean.Class == "ref":
				case st.Mean.Count && !math.IsNaN(st.Mean.Diff):
					cell += " (" + textSigned(st.Mean.Diff) + ")"
				case !st.Mean.Count && !math.IsNaN(st.Mean.Percent):
					cell += fmt.Sprintf(" (%+.1f%%)", st.Mean.Percent)
				}
				row = append(row, cell)
			}
			table = append(table, row)
		}
		writeAligned(&sb, table, 1)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// textSigned renders a difference with its sign, as textNum: "+9375".
func textSigned(v float64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%+.*f", textPrec(v), v)
}

// textPrec is the number of decimals that shows v with about three significant
// digits (at most 9, so a tiny value cannot ask for hundreds).
func textPrec(v float64) int {
	a := math.Abs(v)
	if math.IsNaN(a) || math.IsInf(a, 0) || a == 0 || a >= 100 {
		return 0
	}
	return min(max(2-int(math.Floor(math.Log10(a))), 0), 9)
}

// textSig formats v with sigPrec's decimals, "-" for NaN and infinities.
func textSig(v float64, minPrec int) string { return textNum(v, sigPrec(v, minPrec)) }

// sigPrec is at least minPrec decimals and as many more as two
// significant digits need (at most 9): an imported run's 0.023 MB/s must
// not print as 0.0.
func sigPrec(v float64, minPrec int) int {
	if a := math.Abs(v); a > 0 && !math.IsInf(a, 0) {
		return max(minPrec, min(1-int(math.Floor(math.Log10(a))), 9))
	}
	return minPrec
}

// writeAligned pads the table's columns to their widest cell: the first
// left columns (labels) to the left, the rest (numbers) to the right.
func writeAligned(sb *strings.Builder, table [][]string, left int) {
	widths := make([]int, len(table[0]))
	for _, row := range table {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range table {
		for i, c := range row {
			pad := widths[i] - utf8.RuneCountInString(c)
			switch {
			case i == 0:
				sb.WriteString(c + strings.Repeat(" ", pad))
			case i < left:
				sb.WriteString("  " + c + strings.Repeat(" ", pad))
			default:
				sb.WriteString("  " + strings.Repeat(" ", pad) + c)
			}
		}
		sb.WriteString("\n")
	}
}

// WriteDriverTable prints the rows as one fixed-width table per pair of
// drivers, one line per mode and metric, headed by a line naming the
// drivers. It writes nothing for no rows, so a caller can call it after
// any summary; otherwise a blank line separates it from what came before.
func WriteDriverTable(w io.Writer, rows []analysis.DriverRow) error {
	var sb strings.Builder
	for _, g := range analysis.GroupByDrivers(rows) {
		base, other := g[0].Base, g[0].Other
		x := other + "/" + base
		fmt.Fprintf(&sb, "\ndrivers: each mode on %s against %s (%s near 1: the same datapath)\n", other, base, x)
		withCase := false
		for _, r := range g {
			withCase = withCase || r.Case != ""
		}
		head, labels := []string{"mode", "metric", base, other, x}, 2
		if withCase {
			head, labels = append([]string{"test"}, head...), 3
		}
		table := [][]string{head}
		for _, r := range g {
			row := []string{r.Mode, r.Short, textSig(r.BaseValue, driverPrec(r.Metric, r.BaseValue)),
				textSig(r.OtherValue, driverPrec(r.Metric, r.OtherValue)), textSig(r.Ratio, 2)}
			if withCase {
				row = append([]string{r.Case}, row...)
			}
			table = append(table, row)
		}
		writeAligned(&sb, table, labels)
	}
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return fmt.Errorf("write driver table: %w", err)
	}
	return nil
}

// driverPrec shows ping-pong metrics with at least WriteTable's decimals
// (sig adds digits to small values alike), so the two tables of `cnperf
// summary` agree digit for digit, and other cases' metrics with about three
// significant digits, as WriteCaseTables does.
func driverPrec(metric string, v float64) int {
	switch metric {
	case "transfer":
		return 1
	case "latency", "outer":
		return 3
	case "cell_rps":
		return 0
	}
	return textPrec(v)
}
