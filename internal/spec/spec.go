// Package spec reads and checks what a run measures: the modes, the driver
// and the workload's parameters, from a YAML file or an embedded preset.
// Unknown fields are errors, so a typo never silently falls back to a default.
package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/bits"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/registry"
	"github.com/cnperf/cnperf/presets"
)

// Spec is one experiment.
type Spec struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	Driver      string `yaml:"driver" json:"driver"`
	// Drivers, when given, compares drivers: every mode runs on each, side
	// by side in one run (see ModeKeys).
	Drivers   []string `yaml:"drivers,omitempty" json:"drivers,omitempty"`
	Modes     []string `yaml:"modes" json:"modes"`
	Reference string   `yaml:"reference" json:"reference"`
	// ReferencePer names conditions (node_placement, ip_family) in which
	// each series keeps its own reference: with variants, a series is
	// compared with the reference mode under the first variant that
	// shares its values of them (VariantReferences), not the first
	// variant's. Without it, every series is compared with ReferenceKey.
	ReferencePer []string          `yaml:"reference_per,omitempty" json:"reference_per,omitempty"`
	Labels       map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	// PingPong holds the ping-pong test's parameters, whether the spec
	// wrote them as its pingpong section or as a test of workload
	// pingpong (pingpongtest.go).
	PingPong PingPong `yaml:"pingpong,omitempty" json:"pingpong"`
	// Tests, when given, are socket workloads (stream, rr, jitter,
	// datagram, grid), each run in every mode; with a ping-pong test
	// among them (RunsPingPong), its cells and theirs interleaved.
	Tests Tests `yaml:"tests,omitempty" json:"tests,omitempty"`
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
	// Placement, for socket tests, says where their containers run: how
	// many servers and clients, on one host or two (Bryzgalov's (2014) fan-out).
	Placement *Placement `yaml:"placement,omitempty" json:"placement,omitempty"`
	// Calibrate derives conditions.bandwidth and zone_delay from a
	// reference run when the run starts (calibrate.go).
	Calibrate *Calibrate `yaml:"calibrate,omitempty" json:"calibrate,omitempty"`
	// Chain, for socket tests, lays the hosts in a line and runs every test
	// from the first host's container to each other's (Zismer's (2016) hops).
	Chain *Chain `yaml:"chain,omitempty" json:"chain,omitempty"`
	// Engines is the docker driver's section, which it decodes and
	// checks (Section).
	Engines *Section `yaml:"engines,omitempty" json:"engines,omitempty"`
	// Kubernetes is the kubernetes driver's section: its cluster and
	// image.
	Kubernetes *Section `yaml:"kubernetes,omitempty" json:"kubernetes,omitempty"`
	// Links impair links of every lab's topology: a host's uplink or the
	// zones' link, delayed, lossy, rate-limited or flapped
	// (conditions.Link).
	Links []conditions.Link `yaml:"links,omitempty" json:"links,omitempty"`
	// Impairments are named lists of links that the condition impairment
	// adds to a lab's (over Links, link by link), so variants compare
	// impaired and clean labs.
	Impairments conditions.Impairments `yaml:"impairments,omitempty" json:"impairments,omitempty"`
	// Disrupt stops and starts a test cluster's daemons inside each cell
	// (conditions.Disruption), on the kubernetes driver.
	Disrupt []conditions.Disruption `yaml:"disrupt,omitempty" json:"disrupt,omitempty"`
	// Claims are the paper's findings a run is judged against (claims.go).
	Claims []Claim `yaml:"claims,omitempty" json:"claims,omitempty"`
	// Waterfall steps through the modes in their listed order, each
	// against the one before it (analysis.Waterfalls): what each layer
	// adds to rr's round trip and to stream's CPU per GB and softirq share.
	Waterfall bool `yaml:"waterfall,omitempty" json:"waterfall,omitempty"`

	// pingPongAt is where the size sweep's test was among the tests, from
	// 1 (0: none written there); sweep its workload ("": the pingpong
	// section's, Sweep), which errors then name as tests[pingPongAt-1].
	pingPongAt int
	sweep      string
}

// UnmarshalJSON reads a spec as a run stored it, its tests' parameters in
// their declared types (a duration stored in nanoseconds is a duration).
func (s *Spec) UnmarshalJSON(b []byte) error {
	type plain Spec
	aux := struct {
		*plain
		Tests []json.RawMessage `json:"tests"`
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if err := s.takeStoredPingPong(aux.Tests); err != nil {
		return err
	}
	registry.Canonical(s.Tests)
	return nil
}

// MaxInstances bounds Instances: every instance is a whole set of labs.
const MaxInstances = 8

// LabInstances returns how many instances of each lab a run builds.
func (s Spec) LabInstances() int { return max(1, s.Instances) }

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
	Links      []conditions.Link // the spec's links, impaired in every lab
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
				c := s.Conditions.Over(v)
				labs = append(labs, Lab{Key: k, Mode: m, Driver: d, Conditions: c, Links: conditions.Merge(s.Links, s.Impairments[c.Impairment])})
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

// checkReferencePer refuses a reference_per that names no condition, or
// that cannot apply: no variants, or a reference given as one series.
func (s Spec) checkReferencePer() error {
	for i, k := range s.ReferencePer {
		if !slices.Contains(conditions.Keys(), k) {
			return fmt.Errorf("reference_per[%d] %q: not a condition (use %s)", i, k, strings.Join(conditions.Keys(), ", "))
		}
		if slices.Contains(s.ReferencePer[:i], k) {
			return fmt.Errorf("reference_per: %q is listed twice", k)
		}
	}
	switch {
	case len(s.ReferencePer) == 0:
	case len(s.Variants) < 2:
		return errors.New("reference_per: keeps a series' reference in its own variant; the spec sweeps no variants")
	case strings.Contains(s.Reference, "/"):
		return fmt.Errorf("reference_per: the reference %q is one series, every series'; name a mode (reference: %s)", s.Reference, strings.SplitN(s.Reference, "/", 2)[0])
	}
	return nil
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

// Socket reports whether the spec runs socket tests (beside a ping-pong
// test or not: RunsPingPong).
func (s Spec) Socket() bool { return len(s.Tests) > 0 }

// Cases returns the socket tests' cases in order; over a chain of hosts,
// each once per target and segment (ChainCases).
func (s Spec) Cases() ([]workload.Case, error) {
	cases, err := registry.Expand(s.Tests)
	if err != nil || s.Chain == nil {
		return cases, err
	}
	return ChainCases(cases, s.Chain.Hosts), nil
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
	// Servers, when given, runs another implementation of the protocol in
	// place of cnperf's servers (servers.go).
	Servers *Servers `yaml:"servers,omitempty" json:"servers,omitempty"`
}

// Plan returns the size plan's parameters.
func (p PingPong) Plan() pingpong.PlanConfig {
	return pingpong.PlanConfig{Min: p.MinSize, Max: p.MaxSize, Coverage: p.Coverage, Repetitions: p.Repetitions, Seed: p.Seed}
}

// DefaultModes are the modes a spec without modes compares: the five of
// the 2017 Coherence thesis. Whether a name is a mode at all is the mode registry's to say
// (lab.Catalog.CheckModes), so that a stored spec loads whatever modes exist today.
var DefaultModes = []string{"bare", "host", "bridge", "macvlan", "overlay"}

// Default is the spec every file starts from: fields a file leaves out keep
// these values.
func Default() Spec {
	return Spec{
		Driver:    "netns",
		Modes:     slices.Clone(DefaultModes),
		Reference: "bare",
		PingPong: PingPong{
			MinSize: pingpong.DefaultMinSize, MaxSize: pingpong.DefaultLargestSize, Coverage: pingpong.DefaultCoverage,
			Repetitions: pingpong.DefaultRepetitions, Concurrency: pingpong.DefaultConcurrency, Seed: pingpong.DefaultSeed,
			Chunk: pingpong.DefaultChunk, Retries: pingpong.DefaultRetries, Timeout: pingpong.DefaultTimeout,
			MaxBody: pingpong.DefaultMaxSize, Port: pingpong.DefaultPingPort,
		},
	}
}

// Parse reads a spec from YAML; source names it in errors.
func Parse(r io.Reader, source string) (Spec, error) {
	s := Default()
	doc, err := io.ReadAll(io.LimitReader(r, MaxSpecBytes+1))
	if err != nil {
		return s, fmt.Errorf("%s: %w", source, err)
	}
	if len(doc) > MaxSpecBytes {
		return s, fmt.Errorf("%s: larger than %d bytes: not a spec", source, MaxSpecBytes)
	}
	// yaml.v3 compares every key of a mapping with every other while
	// decoding, with an error per repeated pair: one mapping of 150,000
	// keys (1 MiB) would never finish. Its shape is bounded first, on the
	// parsed nodes.
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return s, fmt.Errorf("%s: %s", source, YAMLMessage(err, doc))
	}
	if err := checkShape(&root); err != nil {
		return s, fmt.Errorf("%s: %w", source, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return s, fmt.Errorf("%s: empty spec", source)
		}
		return s, fmt.Errorf("%s: %s", source, YAMLMessage(err, doc))
	}
	// A second document would be silently ignored: refuse it.
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return s, fmt.Errorf("%s: more than one YAML document (---): a spec is one document", source)
	}
	var top map[string]yaml.Node
	_ = yaml.Unmarshal(doc, &top)
	_, section := top["pingpong"]
	if err := s.takePingPong(&root, doc, section); err != nil {
		return s, fmt.Errorf("%s: %w", source, err)
	}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("%s: %w", source, err)
	}
	registry.Canonical(s.Tests)
	return s, nil
}

// Bounds on a spec's YAML, far above what a valid spec holds (at most 1000
// tests or sweep values, 64 labels).
const (
	maxMappingKeys = 1000
	maxSeqItems    = 10_000
)

// shapeError is a mapping or sequence too large, found at path.
type shapeError struct {
	path []string // innermost first
	line int
	msg  string
}

func (e *shapeError) Error() string {
	p := ""
	for i := len(e.path) - 1; i >= 0; i-- {
		if p != "" && !strings.HasPrefix(e.path[i], "[") {
			p += "."
		}
		p += e.path[i]
	}
	if p == "" {
		p = "the document"
	}
	return fmt.Sprintf("line %d: %s: %s", e.line, p, e.msg)
}

// checkShape refuses a mapping of more than maxMappingKeys keys or a
// sequence of more than maxSeqItems items anywhere under n (aliases are not
// followed: yaml.v3 bounds their expansion itself).
func checkShape(n *yaml.Node) error {
	switch {
	case n.Kind == yaml.MappingNode && len(n.Content)/2 > maxMappingKeys:
		return &shapeError{line: n.Line, msg: fmt.Sprintf("%d keys, more than %d", len(n.Content)/2, maxMappingKeys)}
	case n.Kind == yaml.SequenceNode && len(n.Content) > maxSeqItems:
		return &shapeError{line: n.Line, msg: fmt.Sprintf("%d items, more than %d", len(n.Content), maxSeqItems)}
	case n.Kind == yaml.MappingNode:
		// A repeated key is an error either way; found here in one pass,
		// not by yaml.v3 with an error for every repeated pair.
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			id := strconv.Itoa(int(k.Kind)) + ":" + k.Value // yaml.v3's notion of the same key
			if first, ok := seen[id]; ok {
				return &shapeError{line: k.Line, msg: fmt.Sprintf("key %q is there twice (first on line %d)", k.Value, first)}
			}
			seen[id] = k.Line
		}
	}
	for i, c := range n.Content {
		err := checkShape(c)
		if err == nil {
			continue
		}
		se := err.(*shapeError)
		switch {
		case n.Kind == yaml.SequenceNode:
			se.path = append(se.path, "["+strconv.Itoa(i)+"]")
		case n.Kind == yaml.MappingNode && i%2 == 1:
			se.path = append(se.path, n.Content[i-1].Value)
		}
		return se
	}
	return nil
}

var fieldRE = regexp.MustCompile(`field (\S+) not found in type (\S+)`)

// sections maps the Go types of nested spec sections to their YAML keys, so
// an unknown field is named with its path ("pingpong.colour").
var sections = map[string]string{"spec.PingPong": "pingpong.", "spec.Servers": "pingpong.servers.", "spec.Placement": "placement.", "spec.Calibrate": "calibrate.", "spec.Calibration": "calibrate.derived.", "workload.Test": "tests[].", "workload.Sweep": "tests[].sweep.", "conditions.Link": "links[].", "conditions.Flap": "links[].flap.", "conditions.Disruption": "disrupt[].", "spec.Claim": "claims[].", "spec.Explanation": "claims[].explain."}

// YAMLMessage is yaml.v3's error in reading doc as one line in the
// user's words: each wrong value with the field it is in (nameFields), an
// unknown field by its path, a syntax error with the line it is on
// (syntaxLine). A spec's errors and a limits file's (check) are said so.
func YAMLMessage(err error, doc []byte) string {
	return yamlMessage(nameFields(err, doc))
}

// yamlMessage turns yaml.v3's errors into one line that names the field.
func yamlMessage(err error) string {
	msg := syntaxLine(strings.TrimPrefix(err.Error(), "yaml: "))
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	msg = fieldRE.ReplaceAllStringFunc(msg, func(m string) string {
		sub := fieldRE.FindStringSubmatch(m)
		return `unknown field "` + sections[sub[2]] + sub[1] + `"`
	})
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
}

// yaml.v3's syntax errors, by who finds them. Its parser's marks count
// lines from 0 and its message says them as they are, one line early,
// and none on the first line; its scanner's it counts from 1, and it
// says none when the error and its context are both on the first line.
var (
	parserProblems = []string{
		"did not find expected ',' or ']'", "did not find expected ',' or '}'",
		"did not find expected '-' indicator", "did not find expected <document start>",
		"did not find expected <stream-start>", "did not find expected key",
		"did not find expected node content", "found duplicate %TAG directive",
		"found duplicate %YAML directive", "found incompatible YAML document",
		"found undefined tag handle",
	}
	scannerProblems = []string{
		"block sequence entries are not allowed in this context", "could not find expected ':'",
		"could not find expected directive name", "did not find URI escaped octet",
		"did not find expected '!'", "did not find expected alphabetic or numeric character",
		"did not find expected comment or line break", "did not find expected digit or '.' character",
		"did not find expected hexdecimal number", "did not find expected tag URI",
		"did not find expected version number", "did not find expected whitespace or line break",
		"did not find expected whitespace", "did not find the expected '>'",
		"exceeded max depth of ", "found a tab character that violates indentation",
		"found a tab character where an indentation space is expected",
		"found an incorrect leading UTF-8 octet", "found an incorrect trailing UTF-8 octet",
		"found an indentation indicator equal to 0", "found character that cannot start any token",
		"found extremely long version number", "found invalid Unicode character escape code",
		"found unexpected document indicator", "found unexpected end of stream",
		"found unexpected non-alphabetical character", "found unknown directive name",
		"found unknown escape character", "mapping keys are not allowed in this context",
		"mapping values are not allowed in this context",
	}
	syntaxRE = regexp.MustCompile(`^(?:line ([0-9]+): )?(.*)$`)
)

// syntaxLine gives a yaml.v3 syntax error (without "yaml: ") the line, from
// 1, it is on; any other message is left as it is.
func syntaxLine(msg string) string {
	m := syntaxRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	line, _ := strconv.Atoi(m[1]) // 0 when yaml.v3 said none
	problem := m[2]
	has := func(list []string) bool {
		return slices.ContainsFunc(list, func(p string) bool { return strings.HasPrefix(problem, p) })
	}
	switch {
	case has(parserProblems):
		line++
	case has(scannerProblems) && line == 0:
		line = 1
	default:
		return msg
	}
	return "line " + strconv.Itoa(line) + ": " + problem
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
	root := &yaml.Node{}
	if yaml.Unmarshal(doc, root) != nil {
		root = nil
	}
	return nameFieldsIn(te, root, "")
}

// nameFieldsIn is nameFields for the values under n, whose path is path
// (a driver's section); nil n names none.
func nameFieldsIn(te *yaml.TypeError, n *yaml.Node, path string) error {
	// One line names the first few: a document of a million wrong values
	// is worth neither a million-part line nor a search for each.
	errs := slices.Clone(te.Errors[:min(len(te.Errors), maxTypeErrors)])
	for i, e := range errs {
		m := typeErrRE.FindStringSubmatch(e)
		if m == nil || n == nil {
			continue
		}
		line, _ := strconv.Atoi(m[1])
		p := findField(n, path, line, m[2], m[3])
		if p == "" {
			p = path // the section itself is of the wrong kind
		}
		if p != "" {
			prefix := "line " + m[1] + ": "
			errs[i] = prefix + p + ": " + strings.TrimPrefix(e, prefix)
		}
	}
	if more := len(te.Errors) - len(errs); more > 0 {
		errs = append(errs, fmt.Sprintf("and %d more", more))
	}
	return &yaml.TypeError{Errors: errs}
}

// maxTypeErrors is how many of yaml.v3's type errors a message names.
const maxTypeErrors = 3

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
			if !spans(k.Line, n.Content, i+2, line) {
				continue
			}
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
			if !spans(v.Line, n.Content, i+1, line) {
				continue
			}
			p := path + "[" + strconv.Itoa(i) + "]"
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

// spans reports whether an entry starting on line from, followed by
// content[next] (if any), can hold line: entries come in line order, so
// the search skips the others without building their paths.
func spans(from int, content []*yaml.Node, next, line int) bool {
	return from <= line && (next >= len(content) || content[next].Line >= line)
}

// Load reads a spec file, no more of it than MaxSpecBytes (Parse): a
// link to /dev/zero is refused as too large, not read whole.
func Load(path string) (Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return Spec{}, fmt.Errorf("read spec: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Preset loads an embedded preset by name.
func Preset(name string) (Spec, error) {
	b, err := presets.Read(name)
	if err != nil {
		return Spec{}, err
	}
	return Parse(bytes.NewReader(b), "preset "+name)
}

// Bounds of a spec, checked before anything is expanded or built: a value
// past one is a one-line error naming its field. MaxCells and the other
// plan limits are checked on the plan's size, computed from the fields
// (PlanSize), never by building the plan.
const (
	MaxSpecBytes    = 1 << 20               // the YAML file
	MaxLabels       = 64                    // labels
	MaxLabelBytes   = 256                   // a label's key or value
	MaxVariants     = 32                    // variants
	MaxLabs         = 64                    // labs built: modes × drivers × variants × instances
	MaxBody         = pingpong.MaxSizeLimit // pingpong.max_body, bytes (4 GiB, pong's limit; so also max_size)
	MaxSizes        = pingpong.MaxPlanSizes // distinct sizes, (max_size - min_size + 1) × coverage, as the size plan's
	MaxCellRequests = 1_000_000             // requests in one cell: chunk × repetitions
	MaxRequests     = 100_000_000           // requests of a run: sizes × repetitions × labs
	MaxCells        = 1_000_000             // cells of a run: units × labs
)

// Size is the size of a run's plan, computed from the spec's fields.
type Size struct {
	Labs     int64 // labs side by side: modes × drivers × variants
	Units    int64 // units per lab: chunks of sizes, or repetitions of cases
	Cells    int64 // Units × Labs
	Sizes    int64 // ping-pong: distinct message sizes
	Requests int64 // ping-pong: requests over all labs
}

// mul multiplies non-negative numbers, saturating at MaxInt64.
func mul(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// labCount is len(s.Labs()), computed: bare runs once over all drivers.
func (s Spec) labCount() int64 {
	bare := int64(0)
	if slices.Contains(s.Modes, "bare") {
		bare = 1
	}
	m, d := int64(len(s.Modes)), int64(len(s.RunDrivers()))
	perVariant := m + mul(d-1, m-bare)
	return mul(perVariant, int64(max(len(s.Variants), 1)))
}

// Validate checks every field and names the first bad one. It bounds every
// field first, then the plan's size (computed, not built), and only then
// expands the socket tests' cases.
func (s Spec) Validate() error {
	if s.Name == "" {
		return errors.New("name: must not be empty")
	}
	if !nameRE.MatchString(s.Name) {
		return fmt.Errorf("name %q: use letters, digits, '.', '_' and '-'", s.Name)
	}
	// Whether a name is a driver is the driver registry's to say
	// (drivers.Check), as for modes.
	for i, d := range s.Drivers {
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
		if seen[m] {
			return fmt.Errorf("modes: %q is listed twice", m)
		}
		seen[m] = true
	}
	if len(s.Variants) > MaxVariants {
		return fmt.Errorf("variants: %d, more than %d", len(s.Variants), MaxVariants)
	}
	if n := mul(s.labCount(), int64(max(s.Instances, 1))); n > MaxLabs {
		return fmt.Errorf("modes, drivers, variants, instances: %d labs side by side, more than %d", n, MaxLabs)
	}
	if s.Reference != "" && !seen[s.Reference] && !slices.Contains(s.ModeKeys(), s.Reference) {
		return fmt.Errorf("reference: mode %q is not in modes", s.Reference)
	}
	if err := s.checkReferencePer(); err != nil {
		return err
	}
	if err := s.Conditions.Validate(runtime.NumCPU()); err != nil {
		return fmt.Errorf("conditions.%w", err)
	}
	labels := map[string]bool{}
	for i, v := range s.Variants {
		if err := s.Conditions.Over(v).Validate(runtime.NumCPU()); err != nil {
			return fmt.Errorf("variants[%d].%w", i, err)
		}
		if l := v.Label(); len(l) > MaxLabelBytes {
			// The label names the variant's series in every reader's
			// output; a run's readers refuse a long one (record.MaxNameBytes).
			return fmt.Errorf("variants[%d]: its label %.40q... is %d bytes, more than %d: give it a name", i, l, len(l), MaxLabelBytes)
		} else if labels[l] {
			return fmt.Errorf("variants[%d]: %q is there twice (give it a name)", i, l)
		} else if l == "" && len(s.Variants) > 1 {
			return fmt.Errorf("variants[%d]: sets nothing", i)
		}
		labels[v.Label()] = true
		// One table size for the machine: every lab of a run has it.
		if got, want := s.Conditions.Over(v).ConntrackMax, s.Conditions.Over(s.Variants[0]).ConntrackMax; got != want {
			return fmt.Errorf("variants[%d].conntrack_max %d: the machine has one table size, the labs of a run share it (variants[0] has %d); set it in conditions", i, got, want)
		}
	}
	if err := s.validateCalibrate(); err != nil {
		return err
	}
	if err := s.validateLinks(); err != nil {
		return err
	}
	if err := s.validateDisrupt(); err != nil {
		return err
	}
	if err := s.validateClaims(); err != nil {
		return err
	}
	if len(s.Labels) > MaxLabels {
		return fmt.Errorf("labels: %d, more than %d", len(s.Labels), MaxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		switch {
		case k == "":
			return errors.New("labels: empty key")
		case len(k) > MaxLabelBytes:
			return fmt.Errorf("labels: key %.20q...: %d bytes, more than %d", k, len(k), MaxLabelBytes)
		case len(s.Labels[k]) > MaxLabelBytes:
			return fmt.Errorf("labels.%s: %d bytes, more than %d", k, len(s.Labels[k]), MaxLabelBytes)
		}
	}
	if s.RunsPingPong() {
		if err := s.checkPingPong(); err != nil {
			return err
		}
	}
	if _, err := s.PlanSize(); err != nil {
		return err
	}
	if !s.Socket() {
		return s.checkWaterfall(nil)
	}
	cases, err := registry.Expand(s.Tests)
	if err != nil {
		return err
	}
	if err := s.checkChain(cases); err != nil {
		return err
	}
	if err := s.checkWaterfall(cases); err != nil {
		return err
	}
	return s.checkPlacement(cases)
}

// MaxWaterfallCases bounds a waterfall's rr and stream cases: each draws a
// figure per metric it steps.
const MaxWaterfallCases = 8

// checkWaterfall refuses a waterfall with no steps to take: fewer than two
// modes, series that have no one order (variants, drivers), no rr or
// stream case to step, or more than MaxWaterfallCases of them.
func (s Spec) checkWaterfall(cases []workload.Case) error {
	if !s.Waterfall {
		return nil
	}
	n := 0
	for _, c := range cases {
		if w := c.Test.Workload; w == "rr" || w == "stream" {
			n++
		}
	}
	switch {
	case len(s.Modes) < 2:
		return errors.New("waterfall: steps from each mode to the next; list at least two modes")
	case len(s.Variants) > 1 || len(s.Drivers) > 1:
		return errors.New("waterfall: steps through the modes in their listed order; with variants or drivers the series have no one order")
	case n == 0:
		return errors.New("waterfall: steps rr's round trip and stream's CPU per GB; the spec has neither an rr nor a stream test")
	case n > MaxWaterfallCases:
		return fmt.Errorf("waterfall: %d rr and stream cases, more than %d (each draws a figure per metric)", n, MaxWaterfallCases)
	}
	return nil
}

// checkPingPong checks the ping-pong test's fields and what the spec's
// other sections say of it.
func (s Spec) checkPingPong() error {
	switch {
	case s.Chain != nil && !s.Socket():
		return s.checkChain(nil)
	case s.Placement != nil && s.Socket():
		return errors.New("placement: places socket tests or ping-pong, not both: run them in two specs")
	}
	if err := s.checkSweepPlacement(); err != nil {
		return err
	}
	if err := s.PingPong.validate(s.ppField()); err != nil {
		return err
	}
	return s.PingPong.checkServers(s.ppField())
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// validate bounds each ping-pong field, naming it as f.FIELD (f:
// pingpong, or tests[i]).
func (p PingPong) validate(f string) error {
	// Each field's own bounds are ping-pong's declaration
	// (pingpong.Descriptor.Params); the rules that tie fields together
	// are here.
	in := func(name string, v int) error {
		if err := pingpong.Check(name, v); err != nil {
			return fmt.Errorf("%s.%s %w", f, name, err)
		}
		return nil
	}
	if err := in("min_size", p.MinSize); err != nil {
		return err
	}
	if p.MaxSize < p.MinSize {
		return fmt.Errorf("%s.max_size %d: must be >= min_size (%d)", f, p.MaxSize, p.MinSize)
	}
	if err := in("max_body", p.MaxBody); err != nil {
		return err
	}
	if p.MaxSize > p.MaxBody {
		return fmt.Errorf("%s.max_size %d: above the server's limit (max_body %d)", f, p.MaxSize, p.MaxBody)
	}
	if !(p.Coverage > 0 && p.Coverage <= 1) { // NaN fails both
		return fmt.Errorf("%s.coverage %g: must be in (0, 1]", f, p.Coverage)
	}
	for _, v := range []struct {
		name string
		v    int
	}{{"repetitions", p.Repetitions}, {"concurrency", p.Concurrency}, {"chunk", p.Chunk}, {"retries", p.Retries}} {
		if err := in(v.name, v.v); err != nil {
			return err
		}
	}
	if b := pingpong.Bound("timeout"); p.Timeout < time.Duration(b.Min) || p.Timeout > time.Duration(b.Max) {
		return fmt.Errorf("%s.timeout %s: must be in (0s, %s]", f, p.Timeout, time.Duration(b.Max))
	}
	return in("port", p.Port)
}

// PlanSize computes the size of the run's plan from the spec's fields,
// without building it, and refuses a plan past the limits (MaxSizes,
// MaxCellRequests, MaxRequests, MaxCells) naming the fields that make it.
// The fields it multiplies must be bounded already (Validate does that).
func (s Spec) PlanSize() (Size, error) {
	z := Size{Labs: s.labCount()}
	if s.RunsPingPong() {
		if err := s.pingPongSize(&z); err != nil {
			return z, err
		}
	}
	if !s.Socket() {
		return z, nil
	}
	counts, err := registry.Counts(s.Tests)
	if err != nil {
		return z, err
	}
	var units int64
	for i, n := range counts {
		units += mul(mul(int64(n), s.Chain.casesPer(s.Tests[i].Workload)), int64(max(s.Tests[i].Repetitions, 1)))
	}
	z.Units += units
	z.Cells = mul(z.Units, z.Labs)
	if z.Cells > MaxCells {
		return z, fmt.Errorf("tests: %d cells (%d case repetitions, from tests[].repetitions and sweeps, and %d chunks of ping-pong's sizes, × %d labs), more than %d",
			z.Cells, units, z.Units-units, z.Labs, MaxCells)
	}
	return z, nil
}

// pingPongSize adds the ping-pong test's sizes, units, cells and requests
// to z, refusing a plan past the limits.
func (s Spec) pingPongSize(z *Size) error {
	p, f := s.PingPong, s.ppField()
	z.Sizes = int64(p.Plan().Count())
	if z.Sizes > MaxSizes {
		return fmt.Errorf("%s.coverage %g: %d sizes in min_size..max_size (%d..%d), more than %d",
			f, p.Coverage, z.Sizes, p.MinSize, p.MaxSize, MaxSizes)
	}
	if n := mul(min(int64(p.Chunk), z.Sizes), int64(p.Repetitions)); n > MaxCellRequests {
		return fmt.Errorf("%s.chunk %d, repetitions %d: %d requests in one cell, more than %d",
			f, p.Chunk, p.Repetitions, n, MaxCellRequests)
	}
	z.Units = (z.Sizes + int64(p.Chunk) - 1) / int64(p.Chunk)
	z.Cells = mul(z.Units, z.Labs)
	if z.Cells > MaxCells {
		return fmt.Errorf("%s.chunk %d: %d cells (%d sizes in chunks of %d, × %d labs), more than %d",
			f, p.Chunk, z.Cells, z.Sizes, p.Chunk, z.Labs, MaxCells)
	}
	z.Requests = mul(mul(z.Sizes, int64(p.Repetitions)), z.Labs)
	if z.Requests > MaxRequests {
		return fmt.Errorf("%s.repetitions %d: %d requests (%d sizes × %d × %d labs), more than %d",
			f, p.Repetitions, z.Requests, z.Sizes, p.Repetitions, z.Labs, MaxRequests)
	}
	return nil
}

// YAML renders the spec as YAML, as stored and as `cnperf presets NAME` shows.
// A socket spec leaves the pingpong section out, as it must; its
// ping-pong test, if it has one, is among its tests (storedTests).
func (s Spec) YAML() ([]byte, error) {
	if !s.Socket() {
		return yaml.Marshal(s)
	}
	tests := s.storedTests()
	s.PingPong = PingPong{}
	if s.pingPongAt == 0 {
		return yaml.Marshal(s)
	}
	var doc, list yaml.Node
	if err := doc.Encode(s); err != nil {
		return nil, err
	}
	if err := list.Encode(tests); err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "tests" {
			doc.Content[i+1] = &list
		}
	}
	return yaml.Marshal(&doc)
}

// planned is t.Planned() with omit and duration each held to their
// bounds: the links are checked before the tests are (which refuse them
// beyond), and a sum of unchecked durations wraps around to a negative
// time.
func planned(t workload.Test) time.Duration {
	d := t.RunTime()
	if d <= 0 {
		return 0
	}
	return min(max(t.Params.Dur("omit"), 0), workload.MaxDuration) + min(d, workload.MaxDuration)
}

// validateDisrupt checks the disruptions against the shortest socket
// test; ping-pong's cells have no time to place them in.
func (s Spec) validateDisrupt() error {
	if len(s.Disrupt) == 0 {
		return nil
	}
	if s.RunsPingPong() {
		return errors.New("disrupt: disruptions fall in socket tests' time; ping-pong's cells have none")
	}
	var shortest time.Duration
	for i, t := range s.Tests {
		if p := planned(t); i == 0 || p < shortest {
			shortest = p
		}
	}
	return conditions.ValidateDisrupt(s.Disrupt, shortest)
}

// validateLinks checks links against the shortest test: every flap must
// be up again before it ends. Ping-pong's cells are chunks of sizes, not
// times: there a flap ends within conditions.MaxUntimedFlapEnd of the
// cell's start and is shorter than pingpong.timeout.
func (s Spec) validateLinks() error {
	for i, v := range append([]conditions.Set{s.Conditions}, s.Variants...) {
		if name := s.Conditions.Over(v).Impairment; name != "" && s.Impairments[name] == nil {
			where := "conditions"
			if i > 0 {
				where = fmt.Sprintf("variants[%d]", i-1)
			}
			return fmt.Errorf("%s.impairment %q: not in impairments", where, name)
		}
	}
	if len(s.Links) == 0 && len(s.Impairments) == 0 {
		return nil
	}
	var shortest time.Duration
	for i, t := range s.Tests {
		p := planned(t)
		if p == 0 {
			shortest = 0
			break
		}
		if i == 0 || p < shortest {
			shortest = p
		}
	}
	var windows []conditions.FlapWindow
	if s.Socket() {
		windows = append(windows, conditions.FlapWindow{Test: shortest})
	}
	if s.RunsPingPong() {
		if err := s.PingPong.validate(s.ppField()); err != nil {
			return err // its timeout bounds the flaps
		}
		windows = append(windows, conditions.FlapWindow{Request: s.PingPong.Timeout})
	}
	// A spec that runs both: every flap fits both kinds of cells.
	for _, w := range windows {
		if err := conditions.ValidateLinks("links", s.Links, w); err != nil {
			return err
		}
		if err := s.Impairments.Validate(w); err != nil {
			return err
		}
	}
	return nil
}
