package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Section is a driver's section of a spec, kept as written (its YAML
// nodes, or a stored run's JSON) until the driver decodes it with its own
// schema: spec knows no driver's fields, and reading a stored run decodes
// none of them.
type Section struct {
	node *yaml.Node
	raw  json.RawMessage
}

// NewSection is a section holding v, as a driver's flag writes its
// section into a spec so that the run stores it. v is of the driver's
// schema, plain fields that always encode.
func NewSection(v any) *Section {
	var n yaml.Node
	_ = n.Encode(v)
	return &Section{node: &n}
}

func (s *Section) UnmarshalYAML(n *yaml.Node) error { s.node = n; return nil }

func (s *Section) UnmarshalJSON(b []byte) error { s.raw = bytes.Clone(b); return nil }

func (s Section) MarshalYAML() (any, error) {
	if s.node != nil {
		return s.node, nil
	}
	var v any
	err := json.Unmarshal(s.raw, &v)
	return v, err
}

func (s Section) MarshalJSON() ([]byte, error) {
	if s.node == nil {
		return s.raw, nil
	}
	var v any
	if err := s.node.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Decode decodes a driver's section, named field in errors, as strictly
// as Parse decodes a spec: an unknown field, or a value of the wrong type,
// is one line naming it and the line it is on. No section decodes to nil.
func Decode[T any](s *Section, field string) (*T, error) {
	var v T
	switch {
	case s == nil:
		return nil, nil
	case s.node == nil:
		dec := json.NewDecoder(bytes.NewReader(s.raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		return &v, nil
	}
	if fe := unknownField(s.node, reflect.TypeOf(v), field); fe != nil {
		return nil, fe
	}
	err := s.node.Decode(&v)
	var te *yaml.TypeError
	if errors.As(err, &te) {
		err = nameFieldsIn(te, s.node, field)
	}
	if err != nil {
		return nil, errors.New(yamlMessage(err))
	}
	return &v, nil
}

// fieldError is a key that the struct type it decodes into (in) has no
// field for, named by its path.
type fieldError struct {
	line int
	path string
	in   reflect.Type
}

func (e *fieldError) Error() string { return fmt.Sprintf("line %d: unknown field %q", e.line, e.path) }

// unknownField finds a key under n that the type t it decodes into has no
// field for, as yaml.v3's KnownFields does.
func unknownField(n *yaml.Node, t reflect.Type, path string) *fieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			f, ok := yamlField(t, k.Value)
			if !ok {
				return &fieldError{k.Line, path + "." + k.Value, t}
			}
			if fe := unknownField(n.Content[i+1], f.Type, path+"."+k.Value); fe != nil {
				return fe
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if fe := unknownField(n.Content[i+1], t.Elem(), path+"."+n.Content[i].Value); fe != nil {
				return fe
			}
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			if fe := unknownField(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); fe != nil {
				return fe
			}
		}
	}
	return nil
}

// yamlField is t's field that YAML key decodes into (yaml.v3's rule: the
// tag's name, else the field's name in lower case).
func yamlField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if f.IsExported() && name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
