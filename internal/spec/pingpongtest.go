package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// A size sweep (ping-pong, or any registry.Sweep lists) is a test like
// the others: `workload: NAME` in tests, its parameters (PingPong's
// fields) beside it; the pingpong section is shorthand for a ping-pong
// test. Either way the spec holds its parameters in PingPong, its
// workload in sweep, and where the entry was (pingPongAt) so that the
// spec is shown and stored as it was written.

// Tests are a spec's socket tests. A size sweep's entry, whose fields
// (servers, repetitions) mean other things than a socket test's, is
// decoded by the spec (takePingPong): it stays here as a placeholder
// until then.
type Tests []workload.Test

// UnmarshalYAML decodes every entry as a workload.Test but a size
// sweep's, which it leaves as a placeholder naming its workload.
func (ts *Tests) UnmarshalYAML(n *yaml.Node) error {
	tests := *n // the entries that are tests, decoded as yaml.v3 decodes a list
	sweeps := map[int]string{}
	if n.Kind == yaml.SequenceNode {
		tests.Content = nil
		for i, item := range n.Content {
			var head struct { // its workload alone: a sweep's fields are not a Test's
				Workload string `yaml:"workload"`
			}
			if item.Decode(&head) == nil && isSweep(workload.Test{Workload: head.Workload}) {
				sweeps[i] = head.Workload
			} else {
				tests.Content = append(tests.Content, item)
			}
		}
	}
	var plain []workload.Test
	if err := tests.Decode(&plain); err != nil {
		return err
	}
	for i := range n.Content {
		if w, ok := sweeps[i]; ok {
			plain = slices.Insert(plain, i, workload.Test{Workload: w})
		}
	}
	*ts = plain
	return nil
}

// isSweep reports whether a test is a size sweep's (a placeholder).
func isSweep(t workload.Test) bool {
	_, ok := registry.Sweep(t.Workload)
	return ok
}

// RunsPingPong reports whether the spec runs a size sweep: a spec
// without socket tests does (its pingpong section, or the defaults), and
// one with a size sweep's test among its tests.
func (s Spec) RunsPingPong() bool { return len(s.Tests) == 0 || s.pingPongAt > 0 }

// Sweep is the size sweep the spec runs (RunsPingPong): its test's
// workload, or ping-pong for the pingpong section.
func (s Spec) Sweep() workload.SizeSweep {
	if w, ok := registry.Sweep(s.sweep); ok {
		return w
	}
	return pingpong.Descriptor
}

// PingPongOnly is the spec without its socket tests: what its ping-pong
// cells ran (the view a report takes of a run that ran both).
func (s Spec) PingPongOnly() Spec {
	s.Tests, s.pingPongAt = nil, 0
	return s
}

// SocketsOnly is the spec without its size sweep.
func (s Spec) SocketsOnly() Spec {
	s.pingPongAt, s.sweep = 0, ""
	return s
}

// Mixed reports whether the spec runs ping-pong and socket tests.
func (s Spec) Mixed() bool { return s.Socket() && s.RunsPingPong() }

// ppField is how errors name ping-pong's parameters: tests[i].FIELD for
// a test entry (where it was), else pingpong.FIELD.
func (s Spec) ppField() string {
	if s.sweep != "" && s.pingPongAt > 0 {
		return fmt.Sprintf("tests[%d]", s.pingPongAt-1)
	}
	return "pingpong"
}

// takePingPong moves a size sweep's entry of tests (a placeholder after
// decoding) into PingPong and sweep, decoded from its node in root with the spec's
// rules: unknown fields refused, wrong types named by their field.
// hasSection says the spec has a pingpong section too.
func (s *Spec) takePingPong(root *yaml.Node, doc []byte, hasSection bool) error {
	at := slices.IndexFunc(s.Tests, isSweep)
	if at < 0 {
		if hasSection && len(s.Tests) > 0 {
			// The section beside socket tests: the ping-pong test,
			// shown and stored first among them.
			s.pingPongAt = 1
		}
		return nil
	}
	field := fmt.Sprintf("tests[%d]", at)
	if hasSection {
		return fmt.Errorf("%s: workload %s and the pingpong section: a spec runs one size sweep; give one of them", field, s.Tests[at].Workload)
	}
	if j := slices.IndexFunc(s.Tests[at+1:], isSweep); j >= 0 {
		return fmt.Errorf("tests[%d]: a second size sweep: a spec runs one (sweep its sizes with min_size, max_size and coverage)", at+1+j)
	}
	tests := testsNode(root)
	if tests.Kind == yaml.AliasNode {
		tests = tests.Alias
	}
	if tests == nil || tests.Kind != yaml.SequenceNode || at >= len(tests.Content) {
		// yaml.v3 decoded the list from a merge key (<<) the node walk
		// does not follow: refused, as indexing it would panic.
		return fmt.Errorf("%s: a size sweep is read from the spec's own tests: list; write the list there, not through a merge key", field)
	}
	n := tests.Content[at]
	body := *n
	body.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != "workload" {
			body.Content = append(body.Content, n.Content[i], n.Content[i+1])
		}
	}
	if fe := unknownField(&body, reflect.TypeFor[PingPong](), field); fe != nil {
		// Named as a test's unknown field is, with what the sweep takes.
		var names []string
		for i := range fe.in.NumField() {
			if name, _, _ := strings.Cut(fe.in.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
				names = append(names, name)
			}
		}
		return fmt.Errorf("line %d: %s: unknown field; %s takes %s", fe.line, fe.path, s.Tests[at].Workload, strings.Join(names, ", "))
	}
	if err := body.Decode(&s.PingPong); err != nil {
		return errors.New(YAMLMessage(err, doc))
	}
	s.sweep = s.Tests[at].Workload
	if s.PingPong.Servers != nil && s.Sweep() != pingpong.Descriptor {
		return fmt.Errorf("%s.servers: other implementations of ping and pong; %s runs its own servers", field, s.sweep)
	}
	s.Tests = slices.Delete(s.Tests, at, at+1)
	s.pingPongAt = at + 1
	return nil
}

// testsNode is the tests sequence of a spec's document node.
func testsNode(root *yaml.Node) *yaml.Node {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "tests" {
			return doc.Content[i+1]
		}
	}
	return &yaml.Node{}
}

// pingPongEntry is the size sweep's test as a tests entry: its workload and
// its parameters.
type pingPongEntry struct {
	Workload string `yaml:"workload" json:"workload"`
	PingPong `yaml:",inline"`
}

// storedTests are the tests as the spec was written: the socket tests,
// with the size sweep's test among them where it was.
func (s Spec) storedTests() []any {
	out := make([]any, 0, len(s.Tests)+1)
	for _, t := range s.Tests {
		out = append(out, t)
	}
	if s.pingPongAt > 0 {
		out = slices.Insert(out, min(s.pingPongAt-1, len(out)), any(pingPongEntry{Workload: s.Sweep().Name(), PingPong: s.PingPong}))
	}
	return out
}

// MarshalJSON stores a spec as written (storedTests): a spec that runs
// a size sweep beside socket tests keeps its test among them.
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec
	if s.pingPongAt == 0 {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		plain
		Tests []any `json:"tests,omitempty"`
	}{plain(s), s.storedTests()})
}

// takeStoredPingPong moves a stored size sweep's entry of tests into
// PingPong and sweep (see MarshalJSON).
func (s *Spec) takeStoredPingPong(raw []json.RawMessage) error {
	s.Tests = make(Tests, 0, len(raw))
	for i, r := range raw {
		var probe struct {
			Workload string `json:"workload"`
		}
		if err := json.Unmarshal(r, &probe); err != nil {
			return fmt.Errorf("tests[%d]: %w", i, err)
		}
		if _, ok := registry.Sweep(probe.Workload); ok && s.pingPongAt == 0 {
			e := pingPongEntry{PingPong: s.PingPong}
			if err := json.Unmarshal(r, &e); err != nil {
				return fmt.Errorf("tests[%d]: %w", i, err)
			}
			s.PingPong, s.sweep, s.pingPongAt = e.PingPong, probe.Workload, i+1
			continue
		}
		var t workload.Test
		if err := json.Unmarshal(r, &t); err != nil {
			return fmt.Errorf("tests[%d]: %w", i, err)
		}
		s.Tests = append(s.Tests, t)
	}
	if len(raw) == 0 {
		s.Tests = nil
	}
	return nil
}
