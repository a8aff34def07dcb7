package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"gopkg.in/yaml.v3"
)

// commonFields are the keys of a test that are no workload's parameter.
var commonFields = []string{"name", "workload", "duration", "interval", "repetitions", "sweep", "clients", "servers", "pairs", "processes"}

// plainTest is Test without its methods, for the codecs' own decoding.
type plainTest Test

// Canonical keeps each test's declared parameters in their kinds' Go
// types (a duration as time.Duration, a whole number as int64) and leaves
// out unset ones, so that a spec is shown and stored alike however its
// values were written (omit: 1000ms is omit: 1s) and as before parameters
// were held by name. Values a workload does not declare, or refuses, stay
// as they are for Expand to name.
func (s Set) Canonical(tests []Test) {
	for i, t := range tests {
		w, ok := s.Lookup(t.Workload)
		if !ok || t.Params == nil {
			continue
		}
		ps := make(Params, len(t.Params))
		for k, v := range t.Params {
			p, ok := Declared(w, k)
			if !ok {
				ps[k] = v
				continue
			}
			if !t.Params.Set(k) {
				continue
			}
			if c, ok := p.canonical(v); ok {
				v = c
			}
			ps[k] = v
		}
		tests[i].Params = ps
	}
}

// UnmarshalYAML reads the common fields as any struct's (type errors name
// their line) and keeps every other key as a parameter, which Validate
// checks against the workload's declaration: the spec decodes a test
// without knowing its workload's parameters.
func (t *Test) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return n.Decode((*plainTest)(t))
	}
	common := *n
	common.Content = nil
	params := Params{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if slices.Contains(commonFields, k.Value) {
			common.Content = append(common.Content, k, v)
			continue
		}
		var x any
		if err := v.Decode(&x); err != nil {
			return err
		}
		if i, ok := x.(int); ok {
			x = int64(i)
		}
		params[k.Value] = x
	}
	if err := common.Decode((*plainTest)(t)); err != nil {
		return err
	}
	if len(params) > 0 {
		t.Params = params
	}
	return nil
}

// UnmarshalJSON reads a test as a run stored it: the common fields, and
// every other key a parameter (numbers kept as json.Number, so that a
// duration stored in nanoseconds reads as one).
func (t *Test) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*plainTest)(t)); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for k, v := range raw {
		if slices.Contains(commonFields, k) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			return fmt.Errorf("tests[].%s: %w", k, err)
		}
		if t.Params == nil {
			t.Params = Params{}
		}
		t.Params[k] = x
	}
	return nil
}

// fieldOrder is the order a test's fields are written in: the order of
// the struct that held every workload's parameters, so that a spec shown
// or stored reads as it always did; any other parameter follows the
// listed ones, by name, before repetitions.
var fieldOrder = []string{"name", "workload", "protocol", "duration", "omit", "interval", "parallel", "length", "rate",
	"request", "response", "count", "timeout", "fit_mtu", "busy_poll", "copy", "", "repetitions", "sweep",
	"clients", "servers", "pairs", "processes"}

// rank is a key's place in fieldOrder ("" stands for parameters not
// listed).
func rank(k string) int {
	if i := slices.Index(fieldOrder, k); i >= 0 {
		return i
	}
	return slices.Index(fieldOrder, "")
}

// orderedKeys are keys in the order they are written.
func orderedKeys(keys []string) []string {
	sort.SliceStable(keys, func(i, j int) bool {
		if ri, rj := rank(keys[i]), rank(keys[j]); ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// MarshalJSON writes the common fields and the parameters in one object.
func (t Test) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(plainTest(t))
	if err != nil || len(t.Params) == 0 {
		return b, err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	for k, v := range t.Params {
		if slices.Contains(commonFields, k) || v == nil {
			continue
		}
		if fields[k], err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("tests[].%s: %w", k, err)
		}
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range orderedKeys(slices.Collect(maps.Keys(fields))) {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(fields[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// MarshalYAML writes the common fields and the parameters in one mapping.
func (t Test) MarshalYAML() (any, error) {
	var common yaml.Node
	if err := common.Encode(plainTest(t)); err != nil {
		return nil, err
	}
	fields := map[string][2]*yaml.Node{}
	for i := 0; i+1 < len(common.Content); i += 2 {
		fields[common.Content[i].Value] = [2]*yaml.Node{common.Content[i], common.Content[i+1]}
	}
	for k, v := range t.Params {
		if slices.Contains(commonFields, k) || v == nil {
			continue
		}
		switch x := v.(type) {
		case json.Number:
			if i, err := x.Int64(); err == nil {
				v = i
			} else {
				v = x.String()
			}
		case time.Duration:
			v = x.String() // 2s, as a spec writes it
		}
		var kn, vn yaml.Node
		if err := kn.Encode(k); err != nil {
			return nil, err
		}
		if err := vn.Encode(v); err != nil {
			return nil, err
		}
		fields[k] = [2]*yaml.Node{&kn, &vn}
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, k := range orderedKeys(slices.Collect(maps.Keys(fields))) {
		out.Content = append(out.Content, fields[k][0], fields[k][1])
	}
	return out, nil
}

// sweepFields are a sweep's keys.
var sweepFields = []string{"param", "values", "from", "to", "step"}

// UnmarshalYAML refuses an unknown key as a spec's strict decoding would
// (a test's fields are decoded apart from it, see Test.UnmarshalYAML).
func (s *Sweep) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains(sweepFields, k.Value) {
				return fmt.Errorf("line %d: field %s not found in type workload.Sweep", k.Line, k.Value)
			}
		}
	}
	type plain Sweep
	return n.Decode((*plain)(s))
}
