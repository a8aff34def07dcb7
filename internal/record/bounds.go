package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"github.com/cnperf/cnperf/internal/spec"
)

// Bounds of a run directory's files. A run directory travels (CI
// artifacts, tarballs), so its readers trust nothing in it: a file larger
// than its bound, a line longer than MaxLineBytes, or anything that is not
// a regular file (a link to /dev/zero, a named pipe) is refused in one
// line naming the file, before it costs memory or time. The writer keeps
// to the same bounds, so every run cnperf writes can be read back.
const (
	// MaxMetaBytes bounds run.json: the most cells a spec may plan
	// (spec.MaxCells, a million) at about 250 bytes each, and the labs.
	MaxMetaBytes = 256 << 20
	// MaxSamplesBytes bounds samples.jsonl.
	MaxSamplesBytes = 64 << 30
	// MaxLineBytes bounds one line of samples.jsonl; the longest a run
	// writes (a socket test's record with its histogram and the spec's
	// labels) is a few KiB.
	MaxLineBytes = 1 << 20
	// MaxSeries bounds the series run.json may name, in modes[] and in
	// its spec (modes × drivers × variants): a run builds at most
	// spec.MaxLabs labs, an import one series per tag; a report of more
	// would be read by nobody, and building the list must stay cheap.
	MaxSeries = 1024
	// MaxNameBytes bounds a name in a run: its id, a series and its mode,
	// driver and variant, a case, test, workload, protocol or swept
	// parameter and value, a label's key or value. Readers write names
	// into table headers, file names and every sample line of an export
	// (OpenMetrics repeats a result's labels on each of its lines: a 1 MB
	// mode name made 926 MB of it), so a longer one is refused. cnperf
	// writes far shorter ones: spec names and test names of 64 bytes, a
	// variant's label and a label's key or value of spec.MaxLabelBytes,
	// a series of a mode, a driver and a variant's label.
	MaxNameBytes = 1 << 10
	// MaxLabelKeys bounds the label keys over all lines of samples.jsonl:
	// a run's lines carry its spec's labels (spec.MaxLabels), an import's
	// a few of its own, and an export writes a column per key.
	MaxLabelKeys = spec.MaxLabels
)

// ErrBounds marks a run directory's file refused by its bounds: not a
// regular file, too large, or a line too long.
var ErrBounds = errors.New("outside the bounds of a run directory")

// boundsError is a refusal that reads as one line naming the file.
type boundsError struct{ msg string }

func (e boundsError) Error() string        { return e.msg }
func (e boundsError) Is(target error) bool { return target == ErrBounds }

func refuse(format string, a ...any) error { return boundsError{fmt.Sprintf(format, a...)} }

// sizeText writes a bound in the unit it was set in.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// kind names what a file that is not a regular one is.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// OpenFile opens path for reading when it is a regular file of at most
// max bytes; a link is followed and judged by what it points to. The
// file is opened non-blocking, so a named pipe swapped in after the first
// look cannot hang the reader, and judged again on the open descriptor.
// The caller still reads at most max bytes (the file may grow): see
// ReadFile and the samples reader.
func OpenFile(path string, max int64) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi, max); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = regular(path, fi, max)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func regular(path string, fi os.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return refuse("%s is %s, not a file", path, kind(fi.Mode()))
	}
	if fi.Size() > max {
		return refuse("%s is larger than %s (%d bytes)", path, sizeText(max), fi.Size())
	}
	return nil
}

// ReadFile reads a regular file of at most max bytes (see OpenFile),
// allocating no more than its size: a larger file, also one that grows
// while it is read, is refused.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := OpenFile(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// One byte more than the size, and bytes.Buffer's minimal read, so
	// reading to EOF does not grow the buffer.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead+1))
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(buf.Len()) > max {
		return nil, refuse("%s is larger than %s", path, sizeText(max))
	}
	return buf.Bytes(), nil
}

// seriesBound is how many series m names at most, computed from the
// lengths of its lists (never by building them), saturating.
func seriesBound(m *Meta) int64 {
	s := m.Spec
	labs := sat(sat(int64(len(s.Modes)), int64(max(len(s.RunDrivers()), 1))), int64(max(len(s.Variants), 1)))
	return labs + int64(len(m.Modes))
}

// sat multiplies non-negative numbers, saturating far above any bound.
func sat(a, b int64) int64 {
	if a != 0 && b > (1<<62)/a {
		return 1 << 62
	}
	return a * b
}

// lineReader reads lines of at most MaxLineBytes, from at most
// MaxSamplesBytes of a file.
type lineReader struct {
	path string
	br   *bufio.Reader
	long []byte // a line longer than br's buffer, gathered
	read int64  // bytes read so far
}

func newLineReader(path string, r io.Reader) *lineReader {
	return &lineReader{path: path, br: bufio.NewReaderSize(io.LimitReader(r, MaxSamplesBytes+1), 64<<10)}
}

// next returns line lineNo of the file, with its newline if it has one;
// io.EOF after the last. The slice is valid until the next call. A line
// longer than MaxLineBytes, or a file longer than MaxSamplesBytes, is an
// error wrapping ErrBounds.
func (l *lineReader) next(lineNo int) ([]byte, error) {
	l.long = l.long[:0]
	for {
		frag, err := l.br.ReadSlice('\n')
		l.read += int64(len(frag))
		if l.read > MaxSamplesBytes {
			return nil, refuse("%s is larger than %s", l.path, sizeText(MaxSamplesBytes))
		}
		n := len(l.long) + len(frag)
		if err == nil {
			n-- // it ends in the newline, which is not the line's
		}
		if n > MaxLineBytes {
			return nil, refuse("%s line %d: longer than %s: not a line cnperf writes", l.path, lineNo, sizeText(MaxLineBytes))
		}
		switch {
		case err == bufio.ErrBufferFull:
			l.long = append(l.long, frag...)
			continue
		case err != nil && err != io.EOF:
			return nil, fmt.Errorf("read %s: %w", l.path, err)
		}
		if len(l.long) > 0 {
			l.long = append(l.long, frag...)
			frag = l.long
		}
		if len(frag) == 0 && err == io.EOF {
			return nil, io.EOF
		}
		return frag, nil
	}
}

// names checks names against MaxNameBytes, keeping the first refusal:
// where says what holds them ("/run/run.json: " or "").
type names struct {
	where string
	err   error
}

// name refuses v, the field named field, when it is longer than a name.
func (n *names) name(field, v string) {
	if n.err == nil && len(v) > MaxNameBytes {
		n.err = refuse("%s%s is %d bytes, longer than %s: not a name cnperf writes", n.where, field, len(v), sizeText(MaxNameBytes))
	}
}

// list checks a list of names, field[i] each.
func (n *names) list(field string, vs []string) {
	for i, v := range vs {
		if len(v) > MaxNameBytes {
			n.name(field+"["+strconv.Itoa(i)+"]", v)
		}
	}
}

// labels checks a label set's keys and values, under field.
func (n *names) labels(field string, l map[string]string) {
	for k, v := range l {
		if len(k) > MaxNameBytes {
			n.name(field+" key "+Quote(k, 20), k)
		}
		n.name(field+"."+k, v)
	}
}

// checkMetaNames refuses a run.json holding a name no run of cnperf's
// has (see MaxNameBytes), before any reader copies it into its output.
// Its lists are bounded already (seriesBound).
func checkMetaNames(path string, m *Meta) error {
	n := names{where: path + ": "}
	n.name("id", m.ID)
	s := &m.Spec
	n.name("spec.name", s.Name)
	n.name("spec.driver", s.Driver)
	n.name("spec.reference", s.Reference)
	n.list("spec.modes", s.Modes)
	n.list("spec.drivers", s.Drivers)
	for i, v := range s.Variants {
		n.name(fmt.Sprintf("spec.variants[%d] (its label)", i), v.Label())
	}
	n.labels("spec.labels", s.Labels)
	for i, t := range s.Tests {
		f := fmt.Sprintf("spec.tests[%d].", i)
		n.name(f+"name", t.Name)
		n.name(f+"workload", t.Workload)
		if t.Sweep != nil {
			n.name(f+"sweep.param", t.Sweep.Param)
			n.list(f+"sweep.values", t.Sweep.Values)
		}
	}
	for i, mm := range m.Modes {
		f := fmt.Sprintf("modes[%d].", i)
		n.name(f+"mode", mm.Mode)
		n.name(f+"setup", mm.Setup)
		n.name(f+"driver", mm.Driver)
	}
	for i := range m.Cells {
		c := &m.Cells[i]
		if len(c.Mode) > MaxNameBytes || len(c.Case) > MaxNameBytes {
			f := fmt.Sprintf("cells[%d].", i)
			n.name(f+"mode", c.Mode)
			n.name(f+"case", c.Case)
		}
	}
	return n.err
}

// lineNames checks the names of samples.jsonl's lines as they are read
// (see MaxNameBytes), and that the lines carry no more than MaxLabelKeys
// label keys in all.
type lineNames struct {
	keys map[string]bool
}

// check refuses a line's labels or names; pairs are field, value.
func (l *lineNames) check(labels map[string]string, pairs ...string) error {
	var n names
	for i := 0; i+1 < len(pairs); i += 2 {
		n.name(pairs[i], pairs[i+1])
	}
	n.labels("labels", labels)
	if n.err != nil {
		return n.err
	}
	for k := range labels {
		if l.keys[k] {
			continue
		}
		if len(l.keys) >= MaxLabelKeys {
			return refuse("labels: more than %d label keys over the lines: not a run cnperf writes", MaxLabelKeys)
		}
		if l.keys == nil {
			l.keys = map[string]bool{}
		}
		l.keys[k] = true
	}
	return nil
}
