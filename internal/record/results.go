// Package record owns everything a run stores, so that whatever reads runs
// (analysis, report, export, import) depends on it alone and on no code
// that builds labs: the run's metadata with its labs, cells and the system
// they ran on (meta.go, lab.go, system.go), ping-pong samples, socket
// records and cost lines (sockets.go), the machine's CPU (cpu.go), and the
// run directory itself, written and read back here.
//
// A run directory holds two files:
//
//   - run.json: the run's metadata, written atomically (temporary file +
//     rename) and possibly rewritten later, e.g. with final timings.
//   - samples.jsonl: one JSON object per line, appended as measurements
//     arrive. Each line is written with a single write(2) on an O_APPEND
//     file, so a run that is killed keeps every line written before, and at
//     worst leaves a truncated last line, which the readers skip and report.
package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// File names inside a run directory.
const (
	MetaFile    = "run.json"
	SamplesFile = "samples.jsonl"
)

// Run is a run directory open for writing.
type Run struct {
	dir string

	mu      sync.Mutex // guards samples and closed
	samples *os.File
	closed  bool

	metaMu sync.Mutex // serialises WriteMeta
}

// Create makes dir (and its parents) and opens dir/samples.jsonl for
// appending. It fails if dir exists and is not an empty directory, so that
// a run never mixes its samples with an earlier one's.
func Create(dir string) (*Run, error) {
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
	return &Run{dir: dir, samples: f}, nil
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
	b = append(b, '\n')

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("append sample: %w", os.ErrClosed)
	}
	if _, err := r.samples.Write(b); err != nil {
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

// Reader reads a finished or interrupted run directory.
type Reader struct {
	dir string
}

// Open opens the run directory dir for reading. It fails if dir has no
// run.json.
func Open(dir string) (*Reader, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a cnperf run: not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, MetaFile)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a cnperf run: no %s", dir, MetaFile)
		}
		return nil, err
	}
	return &Reader{dir: dir}, nil
}

// Meta unmarshals run.json into v.
func (rd *Reader) Meta(v any) error {
	b, err := os.ReadFile(filepath.Join(rd.dir, MetaFile))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(rd.dir, MetaFile), err)
	}
	return nil
}

// ReadReport tells what reading samples.jsonl found.
type ReadReport struct {
	Lines    int      // non-blank lines read
	Skipped  int      // lines skipped because truncated, corrupt or undecodable
	Problems []string // one message per skipped line (at most MaxProblems, then a summary)
}

// MaxProblems caps ReadReport.Problems; Skipped keeps counting beyond it.
const MaxProblems = 20

func (rep *ReadReport) skip(msg string) {
	rep.Skipped++
	switch {
	case len(rep.Problems) < MaxProblems:
		rep.Problems = append(rep.Problems, msg)
	case len(rep.Problems) == MaxProblems:
		rep.Problems = append(rep.Problems, "further problems not listed")
	}
}

// Samples calls fn with every line of samples.jsonl that is a complete
// JSON value, in file order. Blank lines are ignored. A line that is not
// valid JSON (typically the truncated last line of a killed run) is
// skipped and recorded in the report; so is a line for which fn returns an
// error. The returned error is only for I/O failures (e.g. no
// samples.jsonl). The slice passed to fn is reused after fn returns.
func (rd *Reader) Samples(fn func(line []byte) error) (ReadReport, error) {
	var rep ReadReport
	path := filepath.Join(rd.dir, SamplesFile)
	f, err := os.Open(path)
	if err != nil {
		return rep, err
	}
	defer f.Close()

	br := bufio.NewReaderSize(f, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return rep, fmt.Errorf("read %s: %w", path, rerr)
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			rep.Lines++
			switch {
			case !json.Valid(line):
				if !complete {
					rep.skip(fmt.Sprintf("%s:%d: truncated last line (%d bytes, no newline): skipped", SamplesFile, lineNo, len(line)))
				} else {
					rep.skip(fmt.Sprintf("%s:%d: not valid JSON: skipped", SamplesFile, lineNo))
				}
			default:
				if err := fn(line); err != nil {
					rep.skip(fmt.Sprintf("%s:%d: %v: skipped", SamplesFile, lineNo, err))
				}
			}
		}
		if rerr == io.EOF {
			return rep, nil
		}
	}
}

// PingPong returns the run's ping-pong samples in file order. Lines of
// other workloads are skipped silently (they are neither counted in
// Skipped nor reported); undecodable lines are skipped and reported.
func (rd *Reader) PingPong() ([]Sample, ReadReport, error) {
	var out []Sample
	rep, err := rd.Samples(func(line []byte) error {
		var probe struct {
			Workload string `json:"workload"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			return fmt.Errorf("not a JSON object: %w", err)
		}
		if probe.Workload != "pingpong" {
			return nil
		}
		var s Sample
		if err := json.Unmarshal(line, &s); err != nil {
			return fmt.Errorf("bad pingpong sample: %w", err)
		}
		out = append(out, s)
		return nil
	})
	return out, rep, err
}

// Sockets holds a run's socket-test lines.
type Sockets struct {
	Records []Record
	Costs   []Cost
	CPU     []CPUSample
}

// Sockets returns the run's socket-test records, their cells' costs and the
// machine's CPU samples, in file order; other lines are skipped silently,
// undecodable ones skipped and reported.
func (rd *Reader) Sockets() (Sockets, ReadReport, error) {
	var out Sockets
	pingTag := []byte(`"workload":"pingpong"`)
	rep, err := rd.Samples(func(line []byte) error {
		if bytes.Contains(line, pingTag) {
			return nil // the bulk of a ping-pong run: skip without decoding
		}
		var probe struct {
			Workload string `json:"workload"`
			Kind     string `json:"kind"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			return fmt.Errorf("not a JSON object: %w", err)
		}
		switch probe.Workload {
		case "cost":
			var c Cost
			if err := json.Unmarshal(line, &c); err != nil {
				return fmt.Errorf("bad cost record: %w", err)
			}
			out.Costs = append(out.Costs, c)
		case "cpu":
			var c CPUSample
			if err := json.Unmarshal(line, &c); err != nil {
				return fmt.Errorf("bad cpu record: %w", err)
			}
			out.CPU = append(out.CPU, c)
		default:
			if probe.Kind == "" {
				return nil // not a test's record: a ping-pong sample
			}
			// Any workload's: which ones there are is the registry's
			// business, and analysis skips a name it does not know.
			var r Record
			if err := json.Unmarshal(line, &r); err != nil {
				return fmt.Errorf("bad %s record: %w", probe.Workload, err)
			}
			out.Records = append(out.Records, r)
		}
		return nil
	})
	return out, rep, err
}
