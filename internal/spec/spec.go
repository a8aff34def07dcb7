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
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cnperf/cnperf/internal/modes"
	"github.com/cnperf/cnperf/internal/pingpong"
	"github.com/cnperf/cnperf/presets"
)

// Spec is one experiment.
type Spec struct {
	Name        string            `yaml:"name" json:"name"`
	Description string            `yaml:"description,omitempty" json:"description,omitempty"`
	Driver      string            `yaml:"driver" json:"driver"`
	Modes       []string          `yaml:"modes" json:"modes"`
	Reference   string            `yaml:"reference" json:"reference"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	PingPong    PingPong          `yaml:"pingpong" json:"pingpong"`
}

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
		Modes:     modes.Names(),
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
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return s, fmt.Errorf("%s: empty spec", source)
		}
		return s, fmt.Errorf("%s: %s", source, yamlMessage(err))
	}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("%s: %w", source, err)
	}
	return s, nil
}

var fieldRE = regexp.MustCompile(`field (\S+) not found in type \S+`)

// yamlMessage turns yaml.v3's errors into one line that names the field.
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	msg = fieldRE.ReplaceAllString(msg, `unknown field "$1"`)
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
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
	if s.Driver != "netns" {
		return fmt.Errorf("driver %q: unknown (known: netns)", s.Driver)
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
	if s.Reference != "" && !seen[s.Reference] {
		return fmt.Errorf("reference: mode %q is not in modes", s.Reference)
	}
	for k := range s.Labels {
		if k == "" {
			return errors.New("labels: empty key")
		}
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
func (s Spec) YAML() ([]byte, error) { return yaml.Marshal(s) }
