// Package analysis turns stored samples into the numbers people compare:
// per-mode medians and their ratios to the reference mode.
package analysis

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/cnperf/cnperf/internal/pingpong"
	"github.com/cnperf/cnperf/internal/stats"
)

// ModeRow is one mode's ping-pong summary.
type ModeRow struct {
	Mode        string  `json:"mode"`
	Samples     int     `json:"samples"`      // successful exchanges
	Failed      int     `json:"failed"`       // errors, non-200 codes, short bodies
	TransferMBs float64 `json:"transfer_mbs"` // median per-request transfer rate, MB/s (10^6 B/s)
	InnerMS     float64 `json:"inner_ms"`     // median ping→pong time (ppbench's time per request)
	LatencyMS   float64 `json:"latency_ms"`   // median siege→ping→siege time
	RPS         float64 `json:"rps"`          // median over the mode's cells of requests per second
	// Ratios to the reference mode's values (NaN without a reference).
	TransferRatio float64 `json:"transfer_ratio"`
	InnerRatio    float64 `json:"inner_ratio"`
	LatencyRatio  float64 `json:"latency_ratio"`
	RPSRatio      float64 `json:"rps_ratio"`
}

// PingPong summarises samples per mode, in the order of modes. cellRates
// gives each mode's cells' requests per second; their median is robust to
// the rare multi-second stall of a shared machine, which a total over the
// run would let dominate.
func PingPong(samples []pingpong.Sample, cellRates map[string][]float64, modes []string, reference string) []ModeRow {
	type acc struct {
		rate, inner, outer []float64
		failed             int
	}
	by := map[string]*acc{}
	for _, m := range modes {
		by[m] = &acc{}
	}
	for _, s := range samples {
		a := by[s.Mode]
		if a == nil {
			continue
		}
		if !s.OK() || s.DurationMS <= 0 {
			a.failed++
			continue
		}
		a.rate = append(a.rate, s.TransferRate()/1e6)
		a.inner = append(a.inner, s.DurationMS)
		if s.LatencyMS > 0 { // 0: not measured (imported ppbench or ab data)
			a.outer = append(a.outer, s.LatencyMS)
		}
	}
	var rows []ModeRow
	for _, m := range modes {
		a := by[m]
		r := ModeRow{Mode: m, Samples: len(a.rate), Failed: a.failed,
			TransferMBs: stats.Median(a.rate), InnerMS: stats.Median(a.inner), LatencyMS: stats.Median(a.outer), RPS: stats.Median(cellRates[m])}
		rows = append(rows, r)
	}
	var ref *ModeRow
	for i := range rows {
		if rows[i].Mode == reference {
			ref = &rows[i]
		}
	}
	for i := range rows {
		r := &rows[i]
		r.TransferRatio, r.InnerRatio, r.LatencyRatio, r.RPSRatio = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		if ref != nil {
			r.TransferRatio = stats.Ratio(r.TransferMBs, ref.TransferMBs)
			r.InnerRatio = stats.Ratio(r.InnerMS, ref.InnerMS)
			r.LatencyRatio = stats.Ratio(r.LatencyMS, ref.LatencyMS)
			r.RPSRatio = stats.Ratio(r.RPS, ref.RPS)
		}
	}
	return rows
}

// WriteTable prints the rows as a fixed-width table.
func WriteTable(w io.Writer, rows []ModeRow, reference string) error {
	x := "x" + reference
	if reference == "" {
		x = "ratio"
	}
	head := []string{"mode", "samples", "failed", "transfer MB/s", x, "ping->pong ms", x, "siege ms", x, "req/s", x}
	table := [][]string{head}
	for _, r := range rows {
		table = append(table, []string{r.Mode, fmt.Sprint(r.Samples), fmt.Sprint(r.Failed),
			num(r.TransferMBs, 1), num(r.TransferRatio, 2), num(r.InnerMS, 3), num(r.InnerRatio, 2),
			num(r.LatencyMS, 3), num(r.LatencyRatio, 2), num(r.RPS, 0), num(r.RPSRatio, 2)})
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

func num(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}
