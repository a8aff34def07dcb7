// Package spec reads and checks what a run measures: the modes, the driver
// and the workload's parameters, from a YAML file or an embedded preset.
// Unknown fields are errors, so a typo never silently falls back to a default.
package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cnperf/cnperf/internal/conditions"
	"github.com/cnperf/cnperf/internal/modes"
	"github.com/cnperf/cnperf/internal/pingpong"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/presets"
)

// Spec is one experiment.
type Spec struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	Driver      string `yaml:"driver" json:"driver"`
	// Drivers, when given, compares drivers: every mode runs on each, side
	// by side in one run (see ModeKeys).
	Drivers   []string          `yaml:"drivers,omitempty" json:"drivers,omitempty"`
	Modes     []string          `yaml:"modes" json:"modes"`
	Reference string            `yaml:"reference" json:"reference"`
	Labels    map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	PingPong  PingPong          `yaml:"pingpong,omitempty" json:"pingpong"`
	// Tests, when given, are socket workloads (stream, rr, jitter,
	// datagram) run instead of ping-pong, each in every mode.
	Tests []suite.Test `yaml:"tests,omitempty" json:"tests,omitempty"`
	// Conditions apply to every lab; Variants sweep them: each variant
	// (over Conditions) runs every mode again, side by side, keyed
	// MODE/VARIANT.
	Conditions conditions.Set   `yaml:"conditions,omitempty" json:"conditions,omitempty"`
	Variants   []conditions.Set `yaml:"variants,omitempty" json:"variants,omitempty"`
	// Instances builds every lab this many times, apart, and spreads each
	// mode's cells over them (unit u on instance u mod Instances, alike for
	// every mode): one lab instance can run faster than another of the same
	// mode for a whole run, and only several instances show that spread.
	Instances int `yaml:"instances,omitempty" json:"instances,omitempty"`
}

// MaxInstances bounds Instances: every instance is a whole set of labs.
const MaxInstances = 8

// LabInstances returns how many instances of each lab a run builds.
func (s Spec) LabInstances() int { return max(1, s.Instances) }

var knownDrivers = []string{"netns", "docker"}

// RunDrivers returns the drivers a run uses, the first the reference.
func (s Spec) RunDrivers() []string {
	if len(s.Drivers) > 0 {
		return s.Drivers
	}
	return []string{s.Driver}
}

// Lab is one lab of a run: a mode on a driver under a set of conditions,
// and the key its samples, cells and tables carry as their mode.
type Lab struct {
	Key        string
	Mode       string
	Driver     string
	Conditions conditions.Set
}

// Labs lists the labs of a run, in order: the modes; when drivers are
// compared, the modes again on each further driver as MODE@DRIVER (except
// bare, which is the same plain process on every driver); and when
// conditions are swept, each of those once per variant as KEY/VARIANT.
func (s Spec) Labs() []Lab {
	variants := s.Variants
	if len(variants) == 0 {
		variants = []conditions.Set{{}}
	}
	var labs []Lab
	for i, d := range s.RunDrivers() {
		for _, m := range s.Modes {
			if i > 0 && m == "bare" {
				continue
			}
			key := m
			if i > 0 {
				key += "@" + d
			}
			for _, v := range variants {
				k := key
				if len(variants) > 1 {
					k += "/" + v.Label()
				}
				labs = append(labs, Lab{Key: k, Mode: m, Driver: d, Conditions: s.Conditions.Over(v)})
			}
		}
	}
	return labs
}

// ModeKeys returns the labs' keys, in order.
func (s Spec) ModeKeys() []string {
	var keys []string
	for _, l := range s.Labs() {
		keys = append(keys, l.Key)
	}
	return keys
}

// ReferenceKey is the key tables compare against: the reference mode, under
// the first variant when conditions are swept (a key given as reference is
// taken as it is).
func (s Spec) ReferenceKey() string {
	if len(s.Variants) > 1 && s.Reference != "" && !strings.Contains(s.Reference, "/") {
		return s.Reference + "/" + s.Variants[0].Label()
	}
	return s.Reference
}

// SplitModeKey returns a mode key's mode and driver.
func (s Spec) SplitModeKey(key string) (mode, driver string) {
	for _, l := range s.Labs() {
		if l.Key == key {
			return l.Mode, l.Driver
		}
	}
	if m, d, ok := strings.Cut(key, "@"); ok {
		return m, d
	}
	return key, s.RunDrivers()[0]
}

// Socket reports whether the spec runs socket tests rather than ping-pong.
func (s Spec) Socket() bool { return len(s.Tests) > 0 }

// Cases returns the socket tests' cases in order.
func (s Spec) Cases() ([]suite.Case, error) { return suite.Expand(s.Tests) }

// PingPong holds the ping-pong workload's parameters (ppbench's, plus how
// the cells are interleaved).
type PingPong struct {
	MinSize     int           `yaml:"min_size" json:"min_size"`
	MaxSize     int           `yaml:"max_size" json:"max_size"`
	Coverage    float64       `yaml:"coverage" json:"coverage"`
	Repetitions int           `yaml:"repetitions" json:"repetitions"`
	Concurrency int           `yaml:"concurrency" json:"concurrency"`
	Seed        int64         `yaml:"seed" json:"seed"`
	Chunk       int           `yaml:"chunk" json:"chunk"`
	Retries     int           `yaml:"retries" json:"retries"`
	Timeout     time.Duration `yaml:"timeout" json:"timeout"`
	MaxBody     int           `yaml:"max_body" json:"max_body"`
	Port        int           `yaml:"port" json:"port"`
}

// Plan returns the size plan's parameters.
func (p PingPong) Plan() pingpong.PlanConfig {
	return pingpong.PlanConfig{Min: p.MinSize, Max: p.MaxSize, Coverage: p.Coverage, Repetitions: p.Repetitions, Seed: p.Seed}
}

// Default is the spec every file starts from: fields a file leaves out keep
// these values.
func Default() Spec {
	return Spec{
		Driver:    "netns",
		Modes:     modes.DefaultNames(),
		Reference: "bare",
		PingPong: PingPong{
			MinSize: 1, MaxSize: 500000, Coverage: 0.1, Repetitions: 10, Concurrency: 1,
			Seed: 1, Chunk: 10, Retries: 10, Timeout: 60 * time.Second,
			MaxBody: pingpong.DefaultMaxSize, Port: 8080,
		},
	}
}

// Parse reads a spec from YAML; source names it in errors.
func Parse(r io.Reader, source string) (Spec, error) {
	s := Default()
	doc, err := io.ReadAll(r)
	if err != nil {
		return s, fmt.Errorf("%s: %w", source, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return s, fmt.Errorf("%s: empty spec", source)
		}
		return s, fmt.Errorf("%s: %s", source, yamlMessage(nameFields(err, doc)))
	}
	// A second document would be silently ignored: refuse it.
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return s, fmt.Errorf("%s: more than one YAML document (---): a spec is one document", source)
	}
	if s.Socket() {
		var top map[string]yaml.Node
		if yaml.Unmarshal(doc, &top) == nil {
			if _, ok := top["pingpong"]; ok {
				return s, fmt.Errorf("%s: pingpong and tests: a spec runs either ping-pong or socket tests, not both", source)
			}
		}
	}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("%s: %w", source, err)
	}
	return s, nil
}

var fieldRE = regexp.MustCompile(`field (\S+) not found in type (\S+)`)

// sections maps the Go types of nested spec sections to their YAML keys, so
// an unknown field is named with its path ("pingpong.colour").
var sections = map[string]string{"spec.PingPong": "pingpong.", "suite.Test": "tests[].", "suite.Sweep": "tests[].sweep."}

// yamlMessage turns yaml.v3's errors into one line that names the field.
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	msg = fieldRE.ReplaceAllStringFunc(msg, func(m string) string {
		sub := fieldRE.FindStringSubmatch(m)
		return `unknown field "` + sections[sub[2]] + sub[1] + `"`
	})
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
}

var typeErrRE = regexp.MustCompile("^line ([0-9]+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into ")

// nameFields prefixes yaml.v3's type errors ("line 2: cannot unmarshal !!int
// `3` into []string") with the field they are about, found in doc by line
// and value: "line 2: modes: cannot unmarshal ...".
func nameFields(err error, doc []byte) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil {
		return err
	}
	out := &yaml.TypeError{Errors: make([]string, len(te.Errors))}
	for i, e := range te.Errors {
		out.Errors[i] = e
		m := typeErrRE.FindStringSubmatch(e)
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[1])
		if path := findField(&root, "", line, m[2], m[3]); path != "" {
			prefix := "line " + m[1] + ": "
			out.Errors[i] = prefix + path + ": " + strings.TrimPrefix(e, prefix)
		}
	}
	return out
}

// findField returns the path of the first, innermost value node under n on
// line whose text is value (for scalars; yaml.v3 shortens long ones to 7
// bytes and "...") or whose kind is tag (for sequences and mappings).
func findField(n *yaml.Node, path string, line int, tag, value string) string {
	matches := func(v *yaml.Node) bool {
		if v.Line != line {
			return false
		}
		switch v.Kind {
		case yaml.MappingNode:
			return tag == "map"
		case yaml.SequenceNode:
			return tag == "seq"
		case yaml.ScalarNode:
			if short, ok := strings.CutSuffix(value, "..."); ok && len(v.Value) > 10 {
				return strings.HasPrefix(v.Value, short)
			}
			return v.Value == value
		}
		return false
	}
	join := func(p, k string) string {
		if p == "" {
			return k
		}
		return p + "." + k
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p := findField(c, path, line, tag, value); p != "" {
				return p
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			if q := findField(v, p, line, tag, value); q != "" {
				return q
			}
			if matches(v) {
				return p
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if q := findField(v, p, line, tag, value); q != "" {
				return q
			}
			if matches(v) {
				return p
			}
		}
	}
	return ""
}

// Load reads a spec file.
func Load(path string) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("read spec: %w", err)
	}
	return Parse(bytes.NewReader(b), path)
}

// Preset loads an embedded preset by name.
func Preset(name string) (Spec, error) {
	b, err := presets.Read(name)
	if err != nil {
		return Spec{}, err
	}
	return Parse(bytes.NewReader(b), "preset "+name)
}

// Validate checks every field and names the first bad one.
func (s Spec) Validate() error {
	if s.Name == "" {
		return errors.New("name: must not be empty")
	}
	if !regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`).MatchString(s.Name) {
		return fmt.Errorf("name %q: use letters, digits, '.', '_' and '-'", s.Name)
	}
	if !slices.Contains(knownDrivers, s.Driver) {
		return fmt.Errorf("driver %q: unknown (known: %s)", s.Driver, strings.Join(knownDrivers, ", "))
	}
	for i, d := range s.Drivers {
		if !slices.Contains(knownDrivers, d) {
			return fmt.Errorf("drivers[%d] %q: unknown (known: %s)", i, d, strings.Join(knownDrivers, ", "))
		}
		if slices.Contains(s.Drivers[:i], d) {
			return fmt.Errorf("drivers: %q is listed twice", d)
		}
	}
	if s.Instances < 0 || s.Instances > MaxInstances {
		return fmt.Errorf("instances: %d is outside 1..%d", s.Instances, MaxInstances)
	}
	if len(s.Modes) == 0 {
		return errors.New("modes: list at least one mode")
	}
	seen := map[string]bool{}
	for _, m := range s.Modes {
		if _, err := modes.Lookup(m); err != nil {
			return fmt.Errorf("modes: %w", err)
		}
		if seen[m] {
			return fmt.Errorf("modes: %q is listed twice", m)
		}
		seen[m] = true
	}
	if s.Reference != "" && !seen[s.Reference] && !slices.Contains(s.ModeKeys(), s.Reference) {
		return fmt.Errorf("reference: mode %q is not in modes", s.Reference)
	}
	if err := s.Conditions.Validate(runtime.NumCPU()); err != nil {
		return fmt.Errorf("conditions.%w", err)
	}
	labels := map[string]bool{}
	for i, v := range s.Variants {
		if err := s.Conditions.Over(v).Validate(runtime.NumCPU()); err != nil {
			return fmt.Errorf("variants[%d].%w", i, err)
		}
		if l := v.Label(); labels[l] {
			return fmt.Errorf("variants[%d]: %q is there twice (give it a name)", i, l)
		} else if l == "" && len(s.Variants) > 1 {
			return fmt.Errorf("variants[%d]: sets nothing", i)
		}
		labels[v.Label()] = true
	}
	for k := range s.Labels {
		if k == "" {
			return errors.New("labels: empty key")
		}
	}
	if s.Socket() {
		_, err := s.Cases()
		return err
	}
	p := s.PingPong
	if err := p.Plan().Validate(); err != nil {
		return fmt.Errorf("pingpong.%w", err)
	}
	switch {
	case p.Concurrency < 1:
		return fmt.Errorf("pingpong.concurrency %d: must be >= 1", p.Concurrency)
	case p.Chunk < 1:
		return fmt.Errorf("pingpong.chunk %d: must be >= 1", p.Chunk)
	case p.Retries < 0:
		return fmt.Errorf("pingpong.retries %d: must be >= 0", p.Retries)
	case p.Timeout <= 0:
		return fmt.Errorf("pingpong.timeout %s: must be > 0", p.Timeout)
	case p.MaxBody < 1:
		return fmt.Errorf("pingpong.max_body %d: must be >= 1", p.MaxBody)
	case p.MaxSize > p.MaxBody:
		return fmt.Errorf("pingpong.max_size %d: above the server's limit (max_body %d)", p.MaxSize, p.MaxBody)
	case p.Port < 1 || p.Port > 65535:
		return fmt.Errorf("pingpong.port %d: must be in 1..65535", p.Port)
	}
	return nil
}

// YAML renders the spec as YAML, as stored and as `cnperf presets NAME` shows.
// A socket spec leaves the (unused) pingpong section out, as it must.
func (s Spec) YAML() ([]byte, error) {
	if s.Socket() {
		s.PingPong = PingPong{}
	}
	return yaml.Marshal(s)
}
