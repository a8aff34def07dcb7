package report

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/cnperf/cnperf/internal/record"
)

// unsafeName are the characters a series key may hold that a file name
// should not (MODE@DRIVER/VARIANT).
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// ErrNoStacks is ExportStacks' error for a run without profiled cells.
var ErrNoStacks = errors.New("no profiled cell (a run with profile: on stores its cells' stacks)")

// ExportStacks writes each profiled series' stacks, merged over its cells,
// into dir as SERIES.folded: stackcollapse-perf.pl's text ("FRAME;...;FRAME
// COUNT" a line, sorted), which flamegraph.pl, inferno and speedscope read.
// It returns the files written and notes on cells left out; a run without
// profiled cells is an error, as nothing would be written.
func ExportStacks(run Run, dir string) ([]string, []string, error) {
	ps, notes := Profiles(run)
	if len(ps) == 0 {
		return nil, notes, fmt.Errorf("%s: %w", run.Dir, ErrNoStacks)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, notes, err
	}
	var written []string
	seen := map[string]string{}
	for _, p := range ps {
		name := unsafeName.ReplaceAllString(p.Series, "_") + ".folded"
		if other, dup := seen[name]; dup {
			return written, notes, fmt.Errorf("series %q and %q would both be written to %s", other, p.Series, name)
		}
		seen[name] = p.Series
		path := filepath.Join(dir, name)
		if err := writeFolded(path, p.Stacks, run.Dir); err != nil {
			return written, notes, err
		}
		written = append(written, path)
	}
	return written, notes, nil
}

func writeFolded(path string, s record.Stacks, runDir string) error {
	if err := record.CheckOutput(path, runDir); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, k := range slices.Sorted(maps.Keys(s)) {
		fmt.Fprintf(w, "%s %d\n", k, s[k])
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
