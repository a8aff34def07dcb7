// Package importer turns published benchmark logs into cnperf ping-pong
// samples and run directories, so that old data can be summarised, plotted
// and compared with new runs. It reads two CSV formats:
//
//   - ppbench's log (Kratzke's ppbench, the format export.PPBench writes):
//     one row per experiment tag and message size, aggregated over the
//     size's repetitions;
//   - an apachebench-derived CSV: one row per tag and message size, each the
//     summary of one ab invocation.
//
// Both are aggregates: every row becomes ONE sample, standing for all the
// requests the row summarises. Per-request spread and the outer (siege)
// latency are not in these files and cannot be recovered; see
// docs/import.md for what each column becomes.
//
// Bad input follows the rest of cnperf: a malformed row is skipped and
// reported in Info.Skipped; only a file with no header, a missing required
// column or no usable row at all is an error.
package importer

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
)

// Untagged is the mode given to rows whose tag column is empty.
const Untagged = "untagged"

// Bounds of an import. Published logs are kilobytes; the bounds keep a
// hostile or mistaken file (a link to /dev/zero, a log of another tool)
// from costing more than a few hundred megabytes, and keep the run an
// import writes within what every reader of a run directory accepts.
const (
	// MaxFileBytes bounds the file read.
	MaxFileBytes = 64 << 20
	// MaxTags bounds the distinct experiment tags, each a series of the
	// run written: the bound every run directory's reader keeps.
	MaxTags = record.MaxSeries
)

// Info describes what an import read. PPBench and ApacheBench fill it;
// WriteRun records it in run.json.
type Info struct {
	Format string // "ppbench" or "apachebench"
	Source string // the file name, as given

	Rows     int // CSV records after the header, blank lines not counted (a repeated header counts)
	Imported int // samples made: Rows - len(Skipped)

	Machines       []string // ppbench machine tags, in order of first appearance (empty tags left out)
	Experiments    []string // experiment tags (the samples' modes), in order of first appearance
	Concurrency    []int    // distinct concurrency levels, in order of first appearance
	FailedRequests int      // sum of the imported rows' "Failed requests"

	Skipped []Skip   // rows not imported, and why
	Notes   []string // how rows were interpreted where the file left a choice
	// Repeats: each row is one repetition of its size (ab's), so the k-th
	// row of every size of a tag is the k-th run of the sweep, a unit
	// intervals pair (WriteRun); ppbench's rows are one sweep.
	Repeats bool

	// Set by the caller before WriteRun, not by the readers.
	Reference string // reference mode for run.json; "" = as Reference picks it (a tag named like a reference, else the first)
	Cnperf    string // cnperf version recorded in run.json
	Window    int    // TCP receive window the data was measured with (0: unknown)
}

// Skip is one row that was not imported.
type Skip struct {
	Line   int    // line in the file, from 1 (the header is line 1)
	Reason string // e.g. `Time per request "4,0": not a number`
}

func (s Skip) String() string { return fmt.Sprintf("line %d: %s: skipped", s.Line, s.Reason) }

func (in *Info) skip(line int, format string, a ...any) {
	in.Skipped = append(in.Skipped, Skip{Line: line, Reason: fmt.Sprintf(format, a...)})
}

// addExperiment notes a row's tag; a tag past the MaxTags-th distinct one
// is an error, as a run of more series could not be read back.
func (in *Info) addExperiment(tag string, line int) error {
	if contains(in.Experiments, tag) {
		return nil
	}
	if len(in.Experiments) >= MaxTags {
		return fmt.Errorf("%s:%d: more than %d distinct experiment tags (a run holds at most %d series)", in.Source, line, MaxTags, MaxTags)
	}
	in.Experiments = append(in.Experiments, tag)
	return nil
}

func (in *Info) addMachine(m string) {
	if m != "" && !contains(in.Machines, m) {
		in.Machines = append(in.Machines, m)
	}
}

func (in *Info) addConcurrency(c int) {
	if c <= 0 {
		return
	}
	for _, x := range in.Concurrency {
		if x == c {
			return
		}
	}
	in.Concurrency = append(in.Concurrency, c)
}

// finish sets Imported and turns "nothing usable" into an error.
func (in *Info) finish(samples []record.Sample) error {
	in.Imported = len(samples)
	if len(samples) > 0 {
		return nil
	}
	if in.Rows == 0 {
		return fmt.Errorf("%s: no data rows after the header", in.Source)
	}
	return fmt.Errorf("%s: none of the %d data rows is usable (first problem: %s)", in.Source, in.Rows, in.Skipped[0])
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// table reads a CSV file with a header line. Column names are matched
// case-insensitively after trimming blanks (and a UTF-8 byte order mark).
type table struct {
	source string
	r      *csv.Reader
	header []string       // as written, trimmed
	col    map[string]int // lower-cased name -> index
	info   *Info
}

// openTable reads the header and checks that every required column is
// there. aliases maps an accepted alternative name to the canonical one
// (both lower-case). hint, if set, is appended to a missing-column error
// when the header looks like the other format.
func openTable(r io.Reader, info *Info, required []string, aliases map[string]string, hint func(col map[string]int) string) (*table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // rows of the wrong length are skipped, not fatal
	cr.ReuseRecord = false
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty file: no header line", info.Source)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %v", info.Source, err)
	}
	t := &table{source: info.Source, r: cr, col: map[string]int{}, info: info}
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		h = strings.TrimSpace(h)
		t.header = append(t.header, h)
		key := strings.ToLower(h)
		if a, ok := aliases[key]; ok {
			key = a
		}
		if _, dup := t.col[key]; !dup {
			t.col[key] = i
		}
	}
	for _, name := range required {
		if _, ok := t.col[strings.ToLower(name)]; !ok {
			msg := fmt.Sprintf("%s: missing column %q", info.Source, name)
			if hint != nil {
				if h := hint(t.col); h != "" {
					msg += " (" + h + ")"
				}
			}
			return nil, errors.New(msg)
		}
	}
	return t, nil
}

// next returns the next well-formed data row and its line. Rows that do
// not parse as CSV, have the wrong number of fields or repeat the header
// (concatenated files) are skipped and recorded. ok is false at the end.
func (t *table) next() (rec []string, line int, ok bool, err error) {
	for {
		rec, err := t.r.Read()
		if errors.Is(err, io.EOF) {
			return nil, 0, false, nil
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			t.info.Rows++
			t.info.skip(pe.StartLine, "not valid CSV: %v", pe.Err)
			continue
		}
		if err != nil {
			return nil, 0, false, fmt.Errorf("read %s: %w", t.source, err)
		}
		line, _ := t.r.FieldPos(0)
		t.info.Rows++
		if t.isHeader(rec) {
			t.info.skip(line, "repeated header line")
			continue
		}
		if len(rec) != len(t.header) {
			t.info.skip(line, "%d fields, the header has %d", len(rec), len(t.header))
			continue
		}
		return rec, line, true, nil
	}
}

func (t *table) isHeader(rec []string) bool {
	if len(rec) != len(t.header) {
		return false
	}
	for i, f := range rec {
		if !strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(f, "\ufeff")), t.header[i]) {
			return false
		}
	}
	return true
}

// get returns column name of rec, trimmed; "" if the file has no such column.
func (t *table) get(rec []string, name string) string {
	i, ok := t.col[strings.ToLower(name)]
	if !ok {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// rowError is why one row is skipped.
type rowError struct{ msg string }

func (e rowError) Error() string { return e.msg }

// maxQuoted is how much of a bad field an error quotes: a megabyte of
// garbage must not become a megabyte of error line.
const maxQuoted = 40

func badField(col, val, why string) error {
	if len(val) > maxQuoted {
		val = strings.ToValidUTF8(val[:maxQuoted], "") + "…"
	}
	return rowError{fmt.Sprintf("%s %q: %s", col, val, why)}
}

// nameField refuses a tag that is longer than a run's reader takes a
// name (record.MaxNameBytes): it would name a series, or label every
// sample, of the run written.
func nameField(col, val string) error {
	if len(val) > record.MaxNameBytes {
		return badField(col, val, fmt.Sprintf("%d bytes, longer than %d", len(val), record.MaxNameBytes))
	}
	return nil
}

// maxBytes bounds sizes and lengths: pong serves at most this, and larger
// numbers from a file are typos or garbage (and overflow int from float).
const maxBytes = spec.MaxBody

// bytesField parses column col of rec as a byte count: a non-negative
// number up to maxBytes, rounded (ppbench's median of an even count may be
// x.5).
func (t *table) bytesField(rec []string, col string) (int, error) {
	f, err := t.num(rec, col)
	if err != nil {
		return 0, err
	}
	if f > maxBytes {
		return 0, badField(col, t.get(rec, col), fmt.Sprintf("above %d bytes", maxBytes))
	}
	return int(math.Round(f)), nil
}

// num parses column col of rec as a finite, non-negative number. It
// accepts Go's and Ruby's float forms ("4", "4.0", "1.0e-05").
func (t *table) num(rec []string, col string) (float64, error) {
	s := t.get(rec, col)
	if s == "" {
		return 0, badField(col, s, "empty")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, badField(col, s, "not a number")
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, badField(col, s, "not a finite number")
	}
	if f < 0 {
		return 0, badField(col, s, "negative")
	}
	return f, nil
}

// count parses column col of rec as a non-negative whole number up to
// 2^31-1, written as an integer or as a float with no fractional part
// ("3", "3.0"). The bound keeps sums over rows from overflowing.
func (t *table) count(rec []string, col string) (int, error) {
	s := t.get(rec, col)
	if n, err := strconv.Atoi(s); err == nil {
		switch {
		case n < 0:
			return 0, badField(col, s, "negative")
		case n > math.MaxInt32:
			return 0, badField(col, s, "above 2147483647")
		}
		return n, nil
	}
	f, err := t.num(rec, col)
	if err != nil {
		return 0, err
	}
	switch {
	case f != math.Trunc(f):
		return 0, badField(col, s, "not a whole number")
	case f > math.MaxInt32:
		return 0, badField(col, s, "above 2147483647")
	}
	return int(f), nil
}

// optCount is count for a column the file may lack or leave empty: then 0.
func (t *table) optCount(rec []string, col string) (int, error) {
	if t.get(rec, col) == "" {
		return 0, nil
	}
	return t.count(rec, col)
}

// rep numbers the rows of one (mode, size), from 0, so that a size that a
// file measured twice yields distinguishable samples.
type repCounter map[repKey]int

type repKey struct {
	mode string
	size int
}

func (rc repCounter) next(mode string, size int) int {
	k := repKey{mode, size}
	n := rc[k]
	rc[k] = n + 1
	return n
}
