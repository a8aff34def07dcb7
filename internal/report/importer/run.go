package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
)

// Status is run.json's status of an imported run.
const Status = "imported"

// Driver is the spec driver recorded for imported runs.
const Driver = "import"

// Modes returns the samples' modes in order of first appearance.
func Modes(samples []record.Sample) []string {
	var modes []string
	for _, s := range samples {
		if !contains(modes, s.Mode) {
			modes = append(modes, s.Mode)
		}
	}
	return modes
}

// ReferenceNames are the tags that name a reference setup, in order of
// preference: bare metal, a native process, one called so, a plain VM.
// Published data lists its setups in any order (Kratzke's ab data starts
// with the encrypted overlay, the slowest), so the first tag is no
// reference.
var ReferenceNames = []string{"bare", "native", "reference", "vm"}

// Rename gives the samples' tags the series names pairs say, each
// TAG=NAME (--series): published tags ("Docker+SDN") named as a preset's
// series ("overlay-userspace") so that the preset's claims can be judged
// on the data. A tag the data lacks, a name given twice or a bad name is
// an error.
func Rename(samples []record.Sample, pairs []string) error {
	to, used := map[string]string{}, map[string]bool{}
	modes := Modes(samples)
	for _, p := range pairs {
		tag, name, ok := strings.Cut(p, "=")
		switch {
		case !ok || name == "" || len(name) > record.MaxNameBytes || strings.ContainsAny(name, " \t\n"):
			return fmt.Errorf("--series %s: want TAG=NAME, a name of at most %d bytes without spaces", record.Quote(p, 64), record.MaxNameBytes)
		case !contains(modes, tag):
			return fmt.Errorf("--series %s: no tag %s in the data (tags: %s)", record.Quote(p, 64), record.Quote(tag, 64), strings.Join(modes, ", "))
		case used[name]:
			return fmt.Errorf("--series %s: %s names another tag too", record.Quote(p, 64), record.Quote(name, 64))
		}
		to[tag], used[name] = name, true
	}
	for _, m := range modes {
		if _, renamed := to[m]; used[m] && !renamed {
			return fmt.Errorf("--series: %s is a tag of the data too", record.Quote(m, 64))
		}
	}
	for i, s := range samples {
		if n, ok := to[s.Mode]; ok {
			samples[i].Mode = n
		}
	}
	return nil
}

// maxUnits bounds an import's units per tag: the k-th repetition of a size
// is unit k mod maxUnits, so a file of a million repetitions still makes
// a run.json every reader takes (record.MaxMetaBytes).
const maxUnits = 100

// Reference returns the reference mode WriteRun records: want if set (it
// must be one of modes); else the first of ReferenceNames that is a mode
// (case-insensitively, as the file spells it); else the first mode, and
// named is false: nothing in the file says which setup is the reference,
// so the caller should tell the user to give one.
func Reference(modes []string, want string) (ref string, named bool, err error) {
	if want != "" {
		if !contains(modes, want) {
			return "", false, fmt.Errorf("reference mode %q is not in the data (modes: %s)", want, strings.Join(modes, ", "))
		}
		return want, true, nil
	}
	for _, name := range ReferenceNames {
		for _, m := range modes {
			if strings.EqualFold(m, name) {
				return m, true, nil
			}
		}
	}
	if len(modes) > 0 {
		return modes[0], false, nil
	}
	return "", false, nil
}

// WriteRun stores imported samples as a cnperf run directory that
// `cnperf summary`, `export` and the report read like a measured run. dir
// must not exist or be empty (record.Create). run.json is a record.Meta
// with status "imported" and driver "import"; the spec's modes are the
// samples' modes in order of first appearance, and each mode gets one cell
// holding all its samples, or, when info.Repeats, one per repetition k
// (its chunk k, the unit intervals pair mode and reference by). The cells
// have no duration, so no requests/s is derived from them. format names
// the input format in the description ("" means info.Format).
//
// Samples are written before run.json, so a failed import never leaves a
// directory that looks like a complete run; on error WriteRun removes what
// it created.
func WriteRun(dir string, samples []record.Sample, info Info, format string) (err error) {
	if len(samples) == 0 {
		return errors.New("nothing to import: no samples")
	}
	if format == "" {
		format = info.Format
	}
	modes := Modes(samples)
	ref, _, err := Reference(modes, info.Reference)
	if err != nil {
		return err
	}

	_, statErr := os.Stat(dir)
	createdDir := errors.Is(statErr, os.ErrNotExist)
	run, err := record.Create(dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			run.Close()
			os.Remove(filepath.Join(dir, record.SamplesFile))
			os.Remove(filepath.Join(dir, record.MetaFile))
			if createdDir {
				os.Remove(dir)
			}
		}
	}()

	now := time.Now().UTC()
	var cells []record.Cell
	modeMeta := make([]record.ModeMeta, len(modes))
	for i, m := range modes {
		modeMeta[i] = record.ModeMeta{Mode: m, Summary: fmt.Sprintf("imported from %s: tag %q", format, m)}
	}
	cellOf := map[[2]int]int{} // mode's index, repetition → cell
	sizes := map[int]bool{}
	minSize, maxSize := samples[0].Size, samples[0].Size
	for _, s := range samples {
		key := [2]int{slices.Index(modes, s.Mode), 0}
		if info.Repeats {
			key[1] = s.Rep % maxUnits
		}
		i, ok := cellOf[key]
		if !ok {
			i = len(cells)
			cellOf[key] = i
			cells = append(cells, record.Cell{Index: i, Mode: s.Mode, Chunk: key[1], Start: now, End: now})
		}
		s.Cell = i
		cells[i].Samples++
		if !s.OK() {
			cells[i].Failed++
		}
		sizes[s.Size] = true
		minSize, maxSize = min(minSize, s.Size), max(maxSize, s.Size)
		if err := run.Append(s); err != nil {
			return err
		}
	}
	if err := run.Close(); err != nil {
		return err
	}

	sp := spec.Spec{
		Name:        runName(info.Source),
		Description: fmt.Sprintf("imported from %s file %s", format, info.Source),
		Driver:      Driver,
		Modes:       modes,
		Reference:   ref,
		Labels:      map[string]string{"source": format},
		PingPong:    spec.PingPong{MinSize: minSize, MaxSize: maxSize},
	}
	if len(info.Machines) == 1 {
		sp.Labels["machine"] = info.Machines[0]
	}
	if len(info.Concurrency) == 1 {
		sp.PingPong.Concurrency = info.Concurrency[0]
	}
	meta := record.Meta{
		Format:   1,
		Cnperf:   info.Cnperf,
		ID:       record.NewID("i"),
		Status:   Status,
		Started:  now,
		Finished: &now,
		Spec:     sp,
		Machine:  record.Machine{Hostname: "imported"},
		Sizes:    len(sizes),
		// Published data rarely says; the user may (ppbench's default was 87380).
		ReceiveWindow: info.Window,
		Modes:         modeMeta,
		Cells:         cells,
	}
	return run.WriteMeta(meta)
}

var nameBad = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// runName makes a spec name (spec.Validate's rule: a letter or digit, then
// letters, digits, '.', '_', '-', at most 64) from the file's base name
// without extension.
func runName(source string) string {
	base := filepath.Base(source)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	name := nameBad.ReplaceAllString(base, "-")
	name = strings.TrimLeft(name, "._-")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		return "imported"
	}
	return name
}
