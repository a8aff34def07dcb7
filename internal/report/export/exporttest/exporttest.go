// Package exporttest reads cnperf's exports for other tools' pipelines by
// each format's own rules, independently of the code that writes them:
// OpenMetrics 1.0's text format, the bulk API's NDJSON and perfdash's
// PerfData. Tests of the writers and of the stored runs use it.
package exporttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

var (
	omMetricName = `[a-zA-Z_:][a-zA-Z0-9_:]*`
	omNumber     = `[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Inf|inf)|NaN`
	omEscaped    = `(?:[^"\\\n]|\\[\\"n])*`
	omType       = regexp.MustCompile(`^# TYPE (` + omMetricName + `) (counter|gauge|histogram|gaugehistogram|stateset|info|summary|unknown)$`)
	omUnit       = regexp.MustCompile(`^# UNIT (` + omMetricName + `) ([a-zA-Z0-9_:]*)$`)
	omName       = regexp.MustCompile(`^` + omMetricName + `$`)
	omSample     = regexp.MustCompile(`^(` + omMetricName + `)(?:\{(.*)\})? (` + omNumber + `)(?: (` + omNumber + `))?$`)
	omLabel      = regexp.MustCompile(`^([a-zA-Z_][a-zA-Z0-9_]*)="(` + omEscaped + `)"(,|$)`)
	omHelpText   = regexp.MustCompile(`^(?:[^\\\n]|\\[\\"n])*$`)
)

// CheckOpenMetrics reads b as an OpenMetrics 1.0 text exposition of
// gauges and says where it breaks the format's rules: lines of
// metadata and samples only, each family's metadata once and before its
// samples, a family never resumed after another began, a unit that ends
// its family's name, samples named as their gauge family with well-formed
// and escaped labels, no label set twice in a family, numbers and
// timestamps as the format writes them, UTF-8 throughout, and "# EOF" as
// the last line.
func CheckOpenMetrics(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("not UTF-8")
	}
	text := string(b)
	if !strings.HasSuffix(text, "# EOF\n") {
		return errors.New(`does not end with "# EOF" and a newline`)
	}
	lines := strings.Split(strings.TrimSuffix(text, "# EOF\n"), "\n")
	if lines[len(lines)-1] != "" {
		return errors.New(`"# EOF" does not start a line`)
	}
	lines = lines[:len(lines)-1]
	done := map[string]bool{}
	var fam, typ string
	var sampled bool
	var meta map[string]bool
	sets := map[string]bool{}
	for i, line := range lines {
		at := func(format string, a ...any) error {
			return fmt.Errorf("line %d %q: %s", i+1, line, fmt.Sprintf(format, a...))
		}
		if strings.HasPrefix(line, "#") {
			kind, name := "", ""
			switch {
			case omType.MatchString(line):
				m := omType.FindStringSubmatch(line)
				kind, name = "TYPE", m[1]
				if m[2] != "gauge" {
					return at("cnperf writes gauges only")
				}
			case omUnit.MatchString(line):
				m := omUnit.FindStringSubmatch(line)
				kind, name = "UNIT", m[1]
				if m[2] != "" && !strings.HasSuffix(name, "_"+m[2]) {
					return at("the unit %q does not end the name", m[2])
				}
			case strings.HasPrefix(line, "# HELP "):
				rest := strings.TrimPrefix(line, "# HELP ")
				n, help, _ := strings.Cut(rest, " ")
				if !omName.MatchString(n) || !omHelpText.MatchString(help) {
					return at("not a HELP line")
				}
				kind, name = "HELP", n
			default:
				return at("a comment that is not TYPE, UNIT or HELP (or EOF before the end)")
			}
			if name != fam {
				if done[name] {
					return at("family %s resumed after another began", name)
				}
				if fam != "" {
					done[fam] = true
				}
				fam, typ, sampled, meta, sets = name, "", false, map[string]bool{}, map[string]bool{}
			}
			if sampled {
				return at("metadata after the family's samples")
			}
			if meta[kind] {
				return at("%s twice for %s", kind, name)
			}
			meta[kind] = true
			if kind == "TYPE" {
				typ = "gauge"
			}
			continue
		}
		m := omSample.FindStringSubmatch(line)
		if m == nil {
			return at("not a sample line")
		}
		if m[1] != fam || typ != "gauge" {
			return at("a sample outside its gauge family %s", fam)
		}
		sampled = true
		names := map[string]bool{}
		rest := m[2]
		var set []string
		for rest != "" {
			l := omLabel.FindStringSubmatch(rest)
			if l == nil {
				return at("bad labels at %q", rest)
			}
			if names[l[1]] {
				return at("label %s twice", l[1])
			}
			names[l[1]] = true
			set = append(set, l[1]+"="+l[2])
			rest = rest[len(l[0]):]
		}
		slices.Sort(set)
		k := strings.Join(set, ",")
		if sets[k] {
			return at("label set {%s} twice in %s", k, fam)
		}
		sets[k] = true
	}
	return nil
}

// CheckBulk reads b as a bulk API request body: newline-terminated JSON
// lines in pairs, an action {"index":{"_index":index}} and a document with
// at least uuid, timestamp (RFC 3339), labels and values. It returns the
// number of documents.
func CheckBulk(b []byte, index string) (int, error) {
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
		return 0, errors.New("the last line does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(b) == 0 {
		lines = nil
	}
	if len(lines)%2 != 0 {
		return 0, fmt.Errorf("%d lines: an action without its document", len(lines))
	}
	for i := 0; i < len(lines); i += 2 {
		var action map[string]map[string]any
		if err := strictJSON(lines[i], &action); err != nil {
			return 0, fmt.Errorf("line %d: action: %w", i+1, err)
		}
		if len(action) != 1 || len(action["index"]) != 1 || action["index"]["_index"] != index {
			return 0, fmt.Errorf("line %d: action %s, want one index action into %q", i+1, lines[i], index)
		}
		var doc map[string]any
		if err := strictJSON(lines[i+1], &doc); err != nil {
			return 0, fmt.Errorf("line %d: document: %w", i+2, err)
		}
		for _, k := range []string{"uuid", "timestamp", "labels", "values"} {
			if _, ok := doc[k]; !ok {
				return 0, fmt.Errorf("line %d: document without %s", i+2, k)
			}
		}
		ts, _ := doc["timestamp"].(string)
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			return 0, fmt.Errorf("line %d: timestamp: %w", i+2, err)
		}
	}
	return len(lines) / 2, nil
}

// strictJSON decodes one JSON value that fills the whole line.
func strictJSON(line string, v any) error {
	if strings.TrimSpace(line) != line || line == "" {
		return errors.New("blank or padded line")
	}
	dec := json.NewDecoder(strings.NewReader(line))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// PerfData is perfdash's input as kubernetes/perf-tests declares it
// (perftype.PerfData, DataItem), written here apart from cnperf's own.
type PerfData struct {
	Version   string            `json:"version"`
	DataItems []DataItem        `json:"dataItems"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// DataItem is one of perfdash's points.
type DataItem struct {
	Data   map[string]float64 `json:"data"`
	Unit   string             `json:"unit"`
	Labels map[string]string  `json:"labels,omitempty"`
}

// DecodePerfDash decodes b into PerfData refusing unknown fields, and
// checks what perfdash relies on: version "v1", every item with data and
// a unit, and items with the same labels having the same buckets and unit.
func DecodePerfDash(b []byte) (PerfData, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var pd PerfData
	if err := dec.Decode(&pd); err != nil {
		return pd, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return pd, errors.New("more than one JSON value")
	}
	if pd.Version != "v1" {
		return pd, fmt.Errorf("version %q, want v1", pd.Version)
	}
	shape := map[string]string{}
	for i, it := range pd.DataItems {
		if len(it.Data) == 0 || it.Unit == "" {
			return pd, fmt.Errorf("item %d: no data or no unit", i)
		}
		keys := slices.Sorted(maps.Keys(it.Data))
		lk, _ := json.Marshal(it.Labels) // maps marshal sorted
		s := it.Unit + " " + strings.Join(keys, ",")
		if prev, ok := shape[string(lk)]; ok && prev != s {
			return pd, fmt.Errorf("item %d: labels %s with buckets and unit %q, before %q", i, lk, s, prev)
		}
		shape[string(lk)] = s
	}
	return pd, nil
}
