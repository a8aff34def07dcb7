// Package export writes ping-pong samples in formats other tools read: the
// CSV log of Kratzke's ppbench, and a flat per-request CSV.
package export

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
)

// PPBenchHeader is ppbench's CSV header (ppbench's Ppbench::LOG_HEADER).
var PPBenchHeader = []string{
	"Machine Tag",
	"Experiment Tag",
	"Document Path",
	"Failed requests",
	"Concurrency Level",
	"Total transferred",
	"Time per request",
	"Transfer rate",
	"Requests per second",
	"Retries",
	"Response Code",
}

// PPBenchOptions sets the values ppbench took from its command line.
type PPBenchOptions struct {
	MachineTag  string // "Machine Tag" column
	Concurrency int    // "Concurrency Level" column: the run's concurrency
	// ExperimentTag gives a sample's "Experiment Tag"; nil means s.Mode.
	ExperimentTag func(s record.Sample) string
}

type ppGroup struct {
	tag       string
	size      int
	durations []float64 // of answered repetitions (Error == "")
	lengths   []float64 // of answered repetitions
	retries   int       // of answered repetitions
	failed    int       // repetitions with Error != "" or Code != 200
	code      int       // code of the answered repetition with the lowest Rep
	codeRep   int
	answered  bool
}

// PPBench writes samples as a ppbench log: one row per (experiment tag,
// size), rows in order of first appearance, aggregating the repetitions as
// ppbench's run_bench does:
//
//	Document Path       "/mping/SIZE"
//	Failed requests     repetitions with Code != 200 or Error != ""
//	Concurrency Level   opts.Concurrency
//	Total transferred   median of lengths
//	Time per request    mean of durations (ms)
//	Transfer rate       sum(lengths)·1000 / sum(durations) (bytes/s)
//	Requests per second 1000 / Time per request
//	Retries             sum of retries
//	Response Code       code of the first repetition (lowest Rep)
//
// A repetition with Error != "" got no answer from ping (ppbench's
// timeout/exception case): it counts as failed and contributes to nothing
// else. Lengths, durations, retries and the response code come from the
// answered repetitions only, a failed answer (e.g. 503) included, as in
// ppbench. A group with no answered repetition, or whose durations sum to
// zero, has no finite time and is skipped (ppbench's own loader drops rows
// with a non-positive time per request). Groups are keyed by mode as well,
// so a custom ExperimentTag never merges repetitions of different modes.
//
// Every field is double-quoted, as Ruby's CSV force_quotes writes them, and
// the computed columns are written as Ruby prints a Float ("1062.0").
func PPBench(w io.Writer, samples []record.Sample, opts PPBenchOptions) error {
	bw := bufio.NewWriter(w)
	writeForceQuoted(bw, PPBenchHeader)
	if err := bw.Flush(); err != nil {
		return err
	}
	return PPBenchRows(w, samples, opts)
}

// PPBenchRows writes PPBench's rows without the header: siege's ppbench log
// writes each size's row as soon as its repetitions are in.
func PPBenchRows(w io.Writer, samples []record.Sample, opts PPBenchOptions) error {
	tagOf := opts.ExperimentTag
	if tagOf == nil {
		tagOf = func(s record.Sample) string { return s.Mode }
	}
	type key struct {
		mode, tag string
		size      int
	}
	index := map[key]int{}
	var groups []*ppGroup
	for _, s := range samples {
		tag := tagOf(s)
		k := key{s.Mode, tag, s.Size}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, &ppGroup{tag: tag, size: s.Size})
		}
		g := groups[i]
		if s.Error != "" || s.Code != 200 {
			g.failed++
		}
		if s.Error != "" {
			continue
		}
		g.durations = append(g.durations, s.DurationMS)
		g.lengths = append(g.lengths, float64(s.Length))
		g.retries += s.Retries
		if !g.answered || s.Rep < g.codeRep {
			g.code, g.codeRep = s.Code, s.Rep
			g.answered = true
		}
	}

	bw := bufio.NewWriter(w)
	for _, g := range groups {
		if !g.answered {
			continue
		}
		sumDur := stats.Sum(g.durations) // an answered group has one at least
		if !(sumDur > 0) {
			continue
		}
		tpr := stats.Mean(g.durations)
		writeForceQuoted(bw, []string{
			SafeCell(opts.MachineTag),
			SafeCell(g.tag),
			"/mping/" + strconv.Itoa(g.size),
			strconv.Itoa(g.failed),
			strconv.Itoa(opts.Concurrency),
			rubyFloat(stats.Median(g.lengths)),
			rubyFloat(tpr),
			rubyFloat(stats.Sum(g.lengths) * 1000 / sumDur),
			rubyFloat(1000 / tpr),
			strconv.Itoa(g.retries),
			strconv.Itoa(g.code),
		})
	}
	return bw.Flush()
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// rubyFloat formats f as Ruby's Float#to_s does: the shortest digits that
// read back as f (as Go's), in fixed notation with at least one decimal
// ("1062.0", "0.0001") for 1e-4 <= |f| < 1e16, otherwise in scientific
// notation with at least one decimal and a two-digit exponent ("1.0e-05",
// "1.5e+16").
func rubyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || a >= 1e-4 && a < 1e16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	return mant + "e" + exp // Go writes the exponent as Ruby does: sign and at least two digits
}

// SafeCell neutralises a CSV cell that a spreadsheet would run as a
// formula (CSV injection, OWASP's rule): a cell that begins with '=', '+',
// '-', '@', a tab or a carriage return gets a leading single quote. A cell
// that is a number ("-3.5", "+1e3") is left as it is, so negative numbers
// stay numbers. Tags and errors come from imported files and users.
func SafeCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return s
		}
		return "'" + s
	}
	return s
}

// writeForceQuoted writes one CSV record with every field in double quotes
// and embedded quotes doubled (RFC 4180, Ruby CSV force_quotes: true),
// terminated by "\n". Errors surface from the bufio.Writer's Flush.
func writeForceQuoted(w *bufio.Writer, fields []string) {
	for i, f := range fields {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteByte('"')
		w.WriteString(strings.ReplaceAll(f, `"`, `""`))
		w.WriteByte('"')
	}
	w.WriteByte('\n')
}

// SamplesHeader is the fixed part of the Samples CSV header; one
// "label:KEY" column per label key follows, keys sorted.
var SamplesHeader = []string{
	"mode", "cell", "size", "rep", "duration_ms", "latency_ms",
	"length", "code", "retries", "ts", "error",
}

// Samples writes one CSV row per sample (RFC 4180, minimal quoting, as
// encoding/csv writes it) for analysis in R or pandas. Columns are
// SamplesHeader followed by "label:KEY" for every label key present in any
// sample, sorted; a sample without that label has an empty cell. ts is
// RFC 3339 with nanoseconds, empty for a zero time.
func Samples(w io.Writer, samples []record.Sample) error {
	keySet := map[string]struct{}{}
	for _, s := range samples {
		for k := range s.Labels {
			keySet[k] = struct{}{}
		}
	}
	keys := slices.Sorted(maps.Keys(keySet))

	cw := csv.NewWriter(w)
	header := slices.Clone(SamplesHeader)
	for _, k := range keys {
		header = append(header, "label:"+k)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	for _, s := range samples {
		ts := ""
		if !s.Time.IsZero() {
			ts = s.Time.Format(time.RFC3339Nano)
		}
		row = append(row[:0],
			SafeCell(s.Mode),
			strconv.Itoa(s.Cell),
			strconv.Itoa(s.Size),
			strconv.Itoa(s.Rep),
			formatFloat(s.DurationMS),
			formatFloat(s.LatencyMS),
			strconv.Itoa(s.Length),
			strconv.Itoa(s.Code),
			strconv.Itoa(s.Retries),
			ts,
			SafeCell(s.Error),
		)
		for _, k := range keys {
			row = append(row, SafeCell(s.Labels[k]))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write samples CSV: %w", err)
	}
	return nil
}
