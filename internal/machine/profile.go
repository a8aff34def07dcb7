// Package machine profiles a machine by Kratzke and Quint's (2015) EasyCompare features
// (threads, processing time, memory size and bandwidth, disk read and
// write, network transfer) and compares profiles by their similarity, so
// that runs on different machines are compared only when the machines are.
package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

// Format is the profile file's layout version; a reader refuses others.
const Format = 1

// Kind marks a profile file, so that a run.json or another JSON file given
// by mistake is named as such.
const Kind = "cnperf-machine-profile"

// Feature is one dimension of a profile.
type Feature struct {
	Key, Title, Unit string
}

// Features are EasyCompare's seven, in its order. Time-like values (the
// processing time) enter the similarity as they are: its ratio min/max is
// the same whichever way is better.
var Features = []Feature{
	{"threads", "threads", "CPUs"},
	{"processing_s", "processing time", "s"},
	{"memory_bytes", "memory size", "bytes"},
	{"memory_bandwidth", "memory bandwidth", "bytes/s"},
	{"disk_read", "disk read", "bytes/s"},
	{"disk_write", "disk write", "bytes/s"},
	{"network", "network transfer", "bit/s"},
}

// FeatureKeys lists the features' keys in order.
func FeatureKeys() []string {
	keys := make([]string, len(Features))
	for i, f := range Features {
		keys[i] = f.Key
	}
	return keys
}

// Profile is a machine's feature vector: per feature the median of its
// repetitions, each repetition, and why a feature was not measured.
type Profile struct {
	Format   int                  `json:"format"`
	Kind     string               `json:"kind"`
	Name     string               `json:"name,omitempty"` // a label for tables; the file name when empty
	Created  time.Time            `json:"created"`
	Cnperf   string               `json:"cnperf_version,omitempty"`
	Machine  record.Machine       `json:"machine"`
	Repeat   int                  `json:"repeat"`
	Features map[string]float64   `json:"features"`
	Runs     map[string][]float64 `json:"runs,omitempty"`
	Skipped  map[string]string    `json:"skipped,omitempty"`
	// Notes say how a feature was measured where it matters (the disk's
	// file system and whether the page cache was bypassed).
	Notes []string `json:"notes,omitempty"`
}

// Bounds of a profile file: a profile is a few kilobytes.
const (
	MaxFileBytes = 1 << 20
	MaxRepeat    = 20
	maxNotes     = 32
	maxNoteBytes = 1024
)

// Read reads and checks a profile; name says where it came from in errors.
func Read(r io.Reader, name string) (Profile, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return Profile{}, fmt.Errorf("profile %s: %w", name, err)
	}
	if len(b) > MaxFileBytes {
		return Profile{}, fmt.Errorf("profile %s: larger than %d bytes: not a profile", name, MaxFileBytes)
	}
	var head struct {
		Format *int   `json:"format"`
		Kind   string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return Profile{}, fmt.Errorf("profile %s: not JSON: %v", name, err)
	}
	if head.Kind != Kind {
		return Profile{}, fmt.Errorf("profile %s: not a machine profile (kind %q, want %q)", name, head.Kind, Kind)
	}
	if head.Format == nil || *head.Format != Format {
		f := "none"
		if head.Format != nil {
			f = fmt.Sprint(*head.Format)
		}
		return Profile{}, fmt.Errorf("profile %s: format %s; this cnperf reads format %d", name, f, Format)
	}
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return Profile{}, fmt.Errorf("profile %s: %v", name, err)
	}
	if err := p.check(); err != nil {
		return Profile{}, fmt.Errorf("profile %s: %w", name, err)
	}
	return p, nil
}

// check refuses values no measurement gives, so that compare never sees a
// NaN, an infinity or a ratio with zero.
func (p Profile) check() error {
	keys := FeatureKeys()
	if p.Repeat < 0 || p.Repeat > MaxRepeat {
		return fmt.Errorf("repeat %d: outside 0..%d", p.Repeat, MaxRepeat)
	}
	for k, v := range p.Features {
		if !slices.Contains(keys, k) {
			return fmt.Errorf("features: unknown feature %q", k)
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("features.%s: %v, want a finite number above 0", k, v)
		}
	}
	for k, runs := range p.Runs {
		if !slices.Contains(keys, k) {
			return fmt.Errorf("runs: unknown feature %q", k)
		}
		if len(runs) > MaxRepeat {
			return fmt.Errorf("runs.%s: %d values, more than %d", k, len(runs), MaxRepeat)
		}
	}
	for k := range p.Skipped {
		if !slices.Contains(keys, k) {
			return fmt.Errorf("skipped: unknown feature %q", k)
		}
	}
	if len(p.Notes) > maxNotes {
		return fmt.Errorf("notes: %d, more than %d", len(p.Notes), maxNotes)
	}
	for i, n := range p.Notes {
		if len(n) > maxNoteBytes {
			return fmt.Errorf("notes[%d]: %d bytes, more than %d", i, len(n), maxNoteBytes)
		}
	}
	if len(p.Features) == 0 {
		return errors.New("features: none")
	}
	return nil
}

// Load reads a profile file.
func Load(path string) (Profile, error) {
	// A regular file of at most MaxFileBytes: a named pipe or a device
	// handed as a profile is refused, never waited on or read forever.
	f, err := record.OpenFile(path, MaxFileBytes)
	if err != nil {
		return Profile{}, fmt.Errorf("profile: %w", err)
	}
	defer f.Close()
	p, err := Read(f, path)
	if err == nil && p.Name == "" {
		p.Name = path
	}
	return p, err
}

// Write writes p as indented JSON to path.
func Write(path string, p Profile) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write profile: %w", err)
	}
	return nil
}

// Median returns the median of vs (the mean of the middle two for an even
// count); NaN for none.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
