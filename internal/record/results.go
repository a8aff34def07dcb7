// Package record owns everything a run stores, so that whatever reads runs
// (analysis, report, export, import) depends on it alone and on no code
// that builds labs: the run's metadata with its labs, cells and the system
// they ran on (meta.go, lab.go, system.go), the lines of what was measured
// (every workload's, each cell's cost and the machine's CPU: lines.go),
// and the run directory itself, written and read back here.
//
// A run directory holds two files:
//
//   - run.json: the run's metadata, written atomically (temporary file +
//     rename) and possibly rewritten later, e.g. with final timings.
//   - samples.jsonl: one JSON object per line, appended as measurements
//     arrive. Each line is written with a single write(2) on an O_APPEND
//     file, so a run that is killed keeps every line written before, and at
//     worst leaves a truncated last line, which the readers skip and report.
//
// Run directories travel, so the readers trust nothing in them: each file
// must be a regular one within its size, each line within its length
// (bounds.go), and only the series run.json lists are read.
package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// File names inside a run directory.
const (
	MetaFile    = "run.json"
	SamplesFile = "samples.jsonl"
)

// Run is a run directory open for writing.
type Run struct {
	dir string

	mu      sync.Mutex // guards samples, size and closed
	samples *os.File
	size    int64 // bytes appended to samples
	closed  bool

	metaMu  sync.Mutex // serialises WriteMeta
	maxMeta int        // MaxMetaBytes; smaller in tests
}

// Create makes dir (and its parents) and opens dir/samples.jsonl for
// appending. It fails if dir exists and is not an empty directory, so that
// a run never mixes its samples with an earlier one's.
func Create(dir string) (*Run, error) {
	if err := CheckNewDir(dir); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	if len(entries) > 0 {
		return nil, fmt.Errorf("create run directory: %s is not empty", dir)
	}
	f, err := os.OpenFile(filepath.Join(dir, SamplesFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	return &Run{dir: dir, samples: f, maxMeta: MaxMetaBytes}, nil
}

// CheckNewDir tells whether a run may be created in dir: it does not
// exist yet, or is an empty directory. Its error is the user's (bad
// input), so the run command asks before it builds anything.
func CheckNewDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty: a run needs a new or empty directory, so that it never mixes its samples with another's", dir)
	}
	return nil
}

// Dir returns the run directory.
func (r *Run) Dir() string { return r.dir }

// WriteMeta writes meta as indented JSON to run.json, atomically: readers
// see either the previous content or the new one, never a partial file. It
// may be called any number of times, also after Close.
func (r *Run) WriteMeta(meta any) error {
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", MetaFile, err)
	}
	b = append(b, '\n')
	if len(b) > r.maxMeta {
		return fmt.Errorf("write %s: %d bytes, above the %s its readers take", MetaFile, len(b), sizeText(int64(r.maxMeta)))
	}

	r.metaMu.Lock()
	defer r.metaMu.Unlock()
	if err := writeFileAtomic(filepath.Join(r.dir, MetaFile), b); err != nil {
		return fmt.Errorf("write %s: %w", MetaFile, err)
	}
	return nil
}

func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Make the rename itself durable; best effort, some file systems
	// refuse to fsync a directory.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Append marshals v as JSON and writes it as one line of samples.jsonl
// with a single write(2). os.File does no user-space buffering, so the
// line is in the kernel when Append returns (it survives the process being
// killed, not a machine crash: Close fsyncs). Append is safe for
// concurrent use; concurrent lines never interleave.
func (r *Run) Append(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("append sample: %w", err)
	}
	// json.Marshal never emits a raw newline (it escapes them in
	// strings), so b is exactly one line.
	if len(b) > MaxLineBytes {
		return fmt.Errorf("append sample: a line of %d bytes, above the %s readers of %s take", len(b), sizeText(MaxLineBytes), SamplesFile)
	}
	b = append(b, '\n')

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("append sample: %w", os.ErrClosed)
	}
	if r.size+int64(len(b)) > MaxSamplesBytes {
		return fmt.Errorf("append sample: %s would pass %s, the most its readers take", SamplesFile, sizeText(MaxSamplesBytes))
	}
	n, err := r.samples.Write(b)
	r.size += int64(n)
	if err != nil {
		return fmt.Errorf("append sample: %w", err)
	}
	return nil
}

// Close fsyncs and closes samples.jsonl. Calling it again is a no-op.
func (r *Run) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	serr := r.samples.Sync()
	cerr := r.samples.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("close %s: %w", SamplesFile, err)
	}
	return nil
}

// Reader reads a finished or interrupted run directory, within the
// bounds of bounds.go.
type Reader struct {
	dir string
	// series are the series run.json lists, once Meta has read it: lines
	// of any other series are skipped and counted, so a run directory
	// cannot make its readers build a table per name it invents.
	series map[string]bool
}

// Open opens the run directory dir for reading. It fails if dir has no
// run.json, or one that is not a regular file.
func Open(dir string) (*Reader, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a cnperf run: not a directory", dir)
	}
	path := filepath.Join(dir, MetaFile)
	fi, err = os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s is not a cnperf run: no %s", dir, MetaFile)
	case err != nil:
		return nil, err
	}
	if err := regular(path, fi, MaxMetaBytes); err != nil {
		return nil, err
	}
	return &Reader{dir: dir}, nil
}

// Meta unmarshals run.json into v. Given a *Meta, it also makes the
// sample readers keep only the series that run.json lists (Only).
func (rd *Reader) Meta(v any) error {
	path := filepath.Join(rd.dir, MetaFile)
	b, err := ReadFile(path, MaxMetaBytes)
	if err != nil {
		return err
	}
	// A file of zeros (a sparse one) or of another format is refused at
	// its first byte, before the JSON scanner walks all of it.
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] != '{' {
		return fmt.Errorf("%s: not a JSON object", path)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if m, ok := v.(*Meta); ok {
		if n := seriesBound(m); n > MaxSeries {
			return refuse("%s names %d series, more than %d: not a run cnperf writes", path, n, MaxSeries)
		}
		if err := checkMetaNames(path, m); err != nil {
			return err
		}
		// Readers lay tables out per instance: the spec's bound holds.
		if n := m.Spec.Instances; n < 0 || n > spec.MaxInstances {
			return refuse("%s: spec.instances %d is outside 0..%d: not a run cnperf writes", path, n, spec.MaxInstances)
		}
		rd.Only(m.SeriesKeys())
	}
	return nil
}

// Only makes the sample readers keep the lines of these series alone
// (and the machine's CPU lines, which may name none); the others are
// skipped and counted in ReadReport.Unlisted.
func (rd *Reader) Only(series []string) {
	rd.series = map[string]bool{}
	for _, s := range series {
		rd.series[s] = true
	}
}

// listed tells whether the lines of series are read.
func (rd *Reader) listed(series string) bool {
	return rd.series == nil || rd.series[series]
}

// ReadReport tells what reading samples.jsonl found.
type ReadReport struct {
	Lines    int      // non-blank lines read
	Skipped  int      // lines skipped because truncated, corrupt or undecodable
	Problems []string // one message per skipped line (at most MaxProblems, then a summary)
	Unlisted int      // lines skipped because run.json does not list their series
	names    []string // the first few of those series
	more     bool     // and others
}

// MaxProblems caps ReadReport.Problems; Skipped keeps counting beyond it.
const MaxProblems = 20

// maxNames is how many unlisted series a note names, each shortened to
// maxNameBytes.
const (
	maxNames     = 3
	maxNameBytes = 40
)

func (rep *ReadReport) skip(msg string) {
	rep.Skipped++
	switch {
	case len(rep.Problems) < MaxProblems:
		rep.Problems = append(rep.Problems, msg)
	case len(rep.Problems) == MaxProblems:
		rep.Problems = append(rep.Problems, "further problems not listed")
	}
}

func (rep *ReadReport) unlisted(series string) {
	rep.Unlisted++
	switch {
	case slices.Contains(rep.names, series):
	case len(rep.names) < maxNames:
		rep.names = append(rep.names, series)
	default:
		rep.more = true
	}
}

// Notes are what a reader tells its user about the lines it skipped, one
// line each, naming the file: the damaged lines (at most MaxProblems, and
// then how many in all), and how many lines were of series run.json does
// not list.
func (rep ReadReport) Notes() []string {
	notes := slices.Clone(rep.Problems)
	if rep.Skipped > MaxProblems {
		notes = append(notes, fmt.Sprintf("%s: %d damaged lines skipped in all", SamplesFile, rep.Skipped))
	}
	if rep.Unlisted > 0 {
		var q []string
		for _, n := range rep.names {
			q = append(q, Quote(n, maxNameBytes))
		}
		more := ""
		if rep.more {
			more = ", …"
		}
		lines := "lines of series"
		if rep.Unlisted == 1 {
			lines = "line of a series"
		}
		notes = append(notes, fmt.Sprintf("%s: %d %s that run.json does not list (%s%s): skipped", SamplesFile, rep.Unlisted, lines, strings.Join(q, ", "), more))
	}
	return notes
}

// Quote quotes s as %q does, shortened to about max bytes: an error
// echoes what the user wrote, never megabytes of it.
func Quote(s string, max int) string {
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// lines calls fn with every line of samples.jsonl that is a complete
// JSON value, in file order. Blank lines are ignored. A line that is not
// valid JSON (typically the truncated last line of a killed run) is
// skipped and recorded in the report; so is a line for which fn returns an
// error, but one wrapping ErrBounds, which stops the reading. The returned
// error is for I/O failures (e.g. no samples.jsonl) and for a file outside
// the bounds (bounds.go: not a regular file, too large, a line too long,
// a name too long), which is not read further. The slice passed to
// fn is reused after fn returns.
func (rd *Reader) lines(fn func(line []byte) error) (ReadReport, error) {
	var rep ReadReport
	path := filepath.Join(rd.dir, SamplesFile)
	f, err := OpenFile(path, MaxSamplesBytes)
	if err != nil {
		return rep, err
	}
	defer f.Close()

	lr := newLineReader(path, f)
	for lineNo := 1; ; lineNo++ {
		line, rerr := lr.next(lineNo)
		if rerr == io.EOF {
			return rep, nil
		}
		if rerr != nil {
			return rep, rerr
		}
		complete := line[len(line)-1] == '\n'
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		rep.Lines++
		switch {
		case !json.Valid(line):
			if !complete {
				rep.skip(fmt.Sprintf("%s:%d: truncated last line (%d bytes, no newline): skipped", SamplesFile, lineNo, len(line)))
			} else {
				rep.skip(fmt.Sprintf("%s:%d: not valid JSON: skipped", SamplesFile, lineNo))
			}
		default:
			err := fn(line)
			switch {
			case errors.Is(err, ErrBounds):
				return rep, fmt.Errorf("%s line %d: %w", path, lineNo, err)
			case err != nil:
				rep.skip(fmt.Sprintf("%s:%d: %v: skipped", SamplesFile, lineNo, err))
			}
		}
	}
}

// Contents is what samples.jsonl holds, every workload's lines in file
// order, each saying its workload and cell: ping-pong's per-request
// samples, the other tests' records (their clients' envelope lines), each
// cell's cost and the machine's CPU.
type Contents struct {
	PingPong []Sample
	Records  []Record
	Costs    []Cost
	CPU      []CPUSample
}

// Contents reads samples.jsonl in one pass, so each skipped line is
// reported once: lines of series run.json does not list are skipped and
// counted, undecodable ones skipped and reported, lines of no test (no
// record kind) skipped silently.
func (rd *Reader) Contents() (Contents, ReadReport, error) {
	var out Contents
	var unl ReadReport // the unlisted lines, counted as they are met
	var names lineNames
	rep, err := rd.lines(func(line []byte) error {
		var probe struct {
			Workload string `json:"workload"`
			Kind     string `json:"kind"`
			Mode     string `json:"mode"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			return fmt.Errorf("not a JSON object: %w", err)
		}
		_, sweep := registry.Sweep(probe.Workload) // a size sweep's sample
		switch {
		case !sweep && probe.Workload != "cost" && probe.Workload != "cpu" && probe.Kind == "":
			return nil // no test's record
		case probe.Workload == "cpu" && probe.Mode == "":
			// the machine's CPU between cells: no series
		case !rd.listed(probe.Mode):
			unl.unlisted(probe.Mode)
			return nil
		}
		switch {
		case sweep:
			var s Sample
			if err := json.Unmarshal(line, &s); err != nil {
				return fmt.Errorf("bad %s sample: %w", probe.Workload, err)
			}
			if err := names.check(s.Labels); err != nil {
				return err
			}
			out.PingPong = append(out.PingPong, s)
		case probe.Workload == "cost":
			var c Cost
			if err := json.Unmarshal(line, &c); err != nil {
				return fmt.Errorf("bad cost record: %w", err)
			}
			if err := names.check(c.Labels, "test_workload", c.Test, "case", c.Case); err != nil {
				return err
			}
			out.Costs = append(out.Costs, c)
		case probe.Workload == "cpu":
			var c CPUSample
			if err := json.Unmarshal(line, &c); err != nil {
				return fmt.Errorf("bad cpu record: %w", err)
			}
			out.CPU = append(out.CPU, c)
		default:
			// Any workload's: which ones there are is the registry's
			// business, and analysis skips a name it does not know.
			var r Record
			if err := json.Unmarshal(line, &r); err != nil {
				return fmt.Errorf("bad %s record: %w", probe.Workload, err)
			}
			// The protocol readers take from a test's total and name its
			// case by (an undecodable total is analysis's to skip).
			var data struct {
				Protocol string `json:"protocol"`
			}
			if r.Kind == KindTotal {
				_ = json.Unmarshal(r.Data, &data)
			}
			if err := names.check(r.Labels, "workload", r.Workload, "kind", r.Kind, "case", r.Case, "param", r.Param, "value", r.Value,
				"client", r.Client, "server", r.Server, "data.protocol", data.Protocol); err != nil {
				return err
			}
			out.Records = append(out.Records, r)
		}
		return nil
	})
	// rep as lines returned it, with the unlisted lines counted above.
	rep.Unlisted, rep.names, rep.more = unl.Unlisted, unl.names, unl.more
	return out, rep, err
}
