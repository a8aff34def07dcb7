package importer

import (
	"fmt"
	"io"
	"os"

	"github.com/cnperf/cnperf/internal/record"
)

// MaxListedSkips caps the skipped rows Problems lists; Info.Skipped is
// always complete.
const MaxListedSkips = 20

// The TCP receive windows an import accepts, in bytes: a window is at
// most 2^30 bytes (RFC 7323's largest scale); below 1 KiB no guide or
// split at its multiples means anything.
const (
	MinReceiveWindow = 1 << 10
	MaxReceiveWindow = 1 << 30
)

// Reader is a format's reader: PPBench or ApacheBench.
type Reader func(r io.Reader, source string) ([]record.Sample, Info, error)

// ReaderFor is the reader of a format as `cnperf import --format` names
// it ("ppbench", "ab" or "apachebench") and the format's name as stored.
func ReaderFor(format string) (string, Reader, error) {
	switch format {
	case "ppbench":
		return format, PPBench, nil
	case "ab", "apachebench":
		return "apachebench", ApacheBench, nil
	}
	return "", nil, fmt.Errorf("--format %q: want ppbench or ab", format)
}

// ValidateOut refuses a run directory to import into that is not given,
// or exists and is not empty: an import never mixes with other files.
func ValidateOut(dir string) error {
	if dir == "" {
		return fmt.Errorf("give the run directory to create with -o DIR")
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("-o %s: directory is not empty", dir)
	}
	return nil
}

// ValidateWindow refuses a receive window outside MinReceiveWindow..
// MaxReceiveWindow, in the words of --receive-window.
func ValidateWindow(window int) error {
	if window < MinReceiveWindow || window > MaxReceiveWindow {
		return fmt.Errorf("--receive-window %d: must be in %d..%d bytes (omit it when unknown)", window, MinReceiveWindow, MaxReceiveWindow)
	}
	return nil
}

// ReadFile reads the file at path with read, within MaxFileBytes; a path
// that is no regular file, or a larger one, is refused before it is read.
// Its Info is returned even with an error: what was skipped, and why.
func ReadFile(path string, read Reader) ([]record.Sample, Info, error) {
	f, err := record.OpenFile(path, MaxFileBytes)
	if err != nil {
		return nil, Info{}, err
	}
	defer f.Close()
	return read(io.LimitReader(f, MaxFileBytes), path)
}

// Problems are the lines that tell what reading path skipped (at most
// MaxListedSkips rows) and how it read what the file left open.
func (in Info) Problems(path string) []string {
	var out []string
	for i, s := range in.Skipped {
		if i == MaxListedSkips {
			out = append(out, fmt.Sprintf("%s: further skipped rows not listed", path))
			break
		}
		out = append(out, fmt.Sprintf("%s:%d: %s: skipped", path, s.Line, s.Reason))
	}
	for _, n := range in.Notes {
		out = append(out, fmt.Sprintf("%s: %s", path, n))
	}
	return out
}
