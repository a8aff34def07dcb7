package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LogsDir is the run directory's folder of server logs.
const LogsDir = "logs"

// ErrRunFile marks a refusal to write over a file a run directory holds.
var ErrRunFile = errors.New("refusing to write over a run's own file")

// CheckOutput returns an error wrapping ErrRunFile when writing path (as
// os.Create would: following symlinks, truncating) would replace a file a
// run holds: run.json, its temporary, samples.jsonl or anything under
// logs/ of the run directory path lies in, or, through a hard link or a
// symlink elsewhere, run.json or samples.jsonl of one of runDirs. Readers
// of runs (report, export) call it before every file they write, so
// `-o RUN/run.json` cannot destroy the run; `-o RUN/report.html` is fine.
func CheckOutput(path string, runDirs ...string) error {
	resolved := resolve(path, 0)
	for d := filepath.Dir(resolved); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, MetaFile)); err == nil && !fi.IsDir() {
			if rel, err := filepath.Rel(d, resolved); err == nil && runFile(rel) {
				return fmt.Errorf("%s is %s of the run %s: %w", path, rel, d, ErrRunFile)
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil // nothing there yet: writing it replaces nothing
	}
	for _, dir := range runDirs {
		for _, name := range []string{MetaFile, SamplesFile} {
			if other, err := os.Stat(filepath.Join(dir, name)); err == nil && os.SameFile(fi, other) {
				return fmt.Errorf("%s is %s of the run %s: %w", path, name, dir, ErrRunFile)
			}
		}
	}
	return nil
}

// runFile reports whether rel, relative to a run directory, names one of
// the run's own files.
func runFile(rel string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return rel == MetaFile || rel == SamplesFile || strings.HasPrefix(rel, "."+MetaFile+".tmp-") || first == LogsDir
}

// resolve makes path absolute with its symlinks followed as far as they
// exist: a dangling last link is followed by hand (creating the file
// would create its target), a missing file keeps its name under its
// resolved directory. depth bounds a loop of links.
func resolve(path string, depth int) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&os.ModeSymlink != 0 && depth < 40 {
		if target, err := os.Readlink(abs); err == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(abs), target)
			}
			return resolve(target, depth+1)
		}
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}
