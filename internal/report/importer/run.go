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
		if !slices.Contains(modes, s.Mode) {
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

// Reference returns the reference mode WriteRun records: want if set (it
// must be one of modes); else the first of ReferenceNames that is a mode
// (case-insensitively, as the file spells it); else the first mode, and
// named is false: nothing in the file says which setup is the reference,
// so the caller should tell the user to give one.
func Reference(modes []string, want string) (ref string, named bool, err error) {
	if want != "" {
		if !slices.Contains(modes, want) {
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
// holding all its samples (cell index = the mode's position). The cells
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
	cells := make([]record.Cell, len(modes))
	modeMeta := make([]record.ModeMeta, len(modes))
	for i, m := range modes {
		cells[i] = record.Cell{Index: i, Mode: m, Start: now, End: now}
		modeMeta[i] = record.ModeMeta{Mode: m, Summary: fmt.Sprintf("imported from %s: tag %q", format, m)}
	}
	sizes := map[int]bool{}
	minSize, maxSize := samples[0].Size, samples[0].Size
	for _, s := range samples {
		i := slices.Index(modes, s.Mode)
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
