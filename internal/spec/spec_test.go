package spec_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/presets"
)

func parse(doc string) (spec.Spec, error) {
	return spec.Parse(strings.NewReader(doc), "test.yaml")
}

func TestPresetsParseAndValidate(t *testing.T) {
	names := presets.Names()
	if want := []string{"cni-compare", "cni-compare-pingpong", "conntrack", "drivers", "emulation", "emulation-sockets", "flap", "ipv6", "k8s-disrupt", "k8s-policy", "k8s-quick", "k8s-quick-sockets", "k8s-services", "layers", "quick", "rrul", "seed000", "seed001", "seed001-cores", "seed002", "seed002-hops", "seed002-offloads", "seed003", "seed004", "seed004-zones", "sockets-tiny", "tiny"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("presets.Names() = %v, want %v", names, want)
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			s, err := spec.Preset(n)
			if err != nil {
				t.Fatalf("Preset(%q): %v", n, err)
			}
			if s.Name != n {
				t.Errorf("name = %q, want %q", s.Name, n)
			}
			if err := s.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			// What `cnperf presets NAME` would print after a round trip
			// through Spec.YAML must parse back to the same spec.
			b, err := s.YAML()
			if err != nil {
				t.Fatalf("YAML: %v", err)
			}
			back, err := spec.Parse(bytes.NewReader(b), "roundtrip")
			if err != nil {
				t.Fatalf("parse YAML(): %v\n%s", err, b)
			}
			// A driver's section holds its YAML nodes, whose lines
			// differ: it is the same if it says the same.
			for _, p := range [][2]**spec.Section{{&back.Kubernetes, &s.Kubernetes}, {&back.Engines, &s.Engines}} {
				got, _ := json.Marshal(*p[0])
				want, _ := json.Marshal(*p[1])
				if string(got) != string(want) {
					t.Errorf("round trip changed a section: %s, want %s", got, want)
				}
				*p[0], *p[1] = nil, nil
			}
			if !reflect.DeepEqual(back, s) {
				t.Errorf("round trip changed the spec:\n got %+v\nwant %+v", back, s)
			}
		})
	}
}

func TestPresetUnknown(t *testing.T) {
	_, err := spec.Preset("nosuch")
	if err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Fatalf("Preset(nosuch) error = %v, want one naming the preset", err)
	}
}

func TestQuickPreset(t *testing.T) {
	s, err := spec.Preset("quick")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"bare", "host", "bridge", "macvlan", "overlay"}; !reflect.DeepEqual(s.Modes, want) {
		t.Errorf("modes = %v, want %v", s.Modes, want)
	}
	if s.Reference != "bare" {
		t.Errorf("reference = %q, want bare", s.Reference)
	}
	want := spec.PingPong{MinSize: 1, MaxSize: 500000, Coverage: 0.01, Repetitions: 3, Concurrency: 1,
		Seed: 1, Chunk: 50, Retries: 10, Timeout: 60 * time.Second, MaxBody: 16777216, Port: 8080}
	if s.PingPong != want {
		t.Errorf("pingpong = %+v, want %+v", s.PingPong, want)
	}
}

func TestDefaultsFillMissingFields(t *testing.T) {
	d := spec.Default()
	tests := []struct {
		name string
		doc  string
		want func() spec.Spec
	}{
		{"only name", "name: x\n", func() spec.Spec {
			s := spec.Default()
			s.Name = "x"
			return s
		}},
		{"one pingpong field", "name: x\npingpong:\n  repetitions: 4\n", func() spec.Spec {
			s := spec.Default()
			s.Name = "x"
			s.PingPong.Repetitions = 4
			return s
		}},
		{"modes given", "name: x\nmodes: [bare, overlay]\n", func() spec.Spec {
			s := spec.Default()
			s.Name = "x"
			s.Modes = []string{"bare", "overlay"}
			return s
		}},
		{"timeout as duration", "name: x\npingpong: {timeout: 1500ms}\n", func() spec.Spec {
			s := spec.Default()
			s.Name = "x"
			s.PingPong.Timeout = 1500 * time.Millisecond
			return s
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(tc.doc)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if want := tc.want(); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
	// Default itself: all five modes, bare as reference, ppbench's sizes.
	if want := []string{"bare", "host", "bridge", "macvlan", "overlay"}; !reflect.DeepEqual(d.Modes, want) {
		t.Errorf("Default().Modes = %v, want %v", d.Modes, want)
	}
	if d.Driver != "netns" || d.Reference != "bare" || d.PingPong.MaxSize != 500000 || d.PingPong.MinSize != 1 {
		t.Errorf("Default() = %+v", d)
	}
	// Default() must return a fresh slice: a parsed spec must not alias it.
	s, err := parse("name: x\n")
	if err != nil {
		t.Fatal(err)
	}
	s.Modes[0] = "changed"
	if spec.Default().Modes[0] != "bare" {
		t.Error("changing a parsed spec's modes changed Default()")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // substrings of the error message
	}{
		{"unknown top-level field", "name: x\ncolour: red\n", []string{`unknown field "colour"`, "line 2"}},
		{"unknown pingpong field", "name: x\npingpong: {colour: 1}\n", []string{`unknown field "pingpong.colour"`}},
		{"two documents", "name: x\n---\nname: y\n", []string{"more than one YAML document"}},
		{"duplicate mode", "name: x\nmodes: [bare, host, bare]\n", []string{"modes", `"bare" is listed twice`}},
		{"reference not in modes", "name: x\nmodes: [host, bridge]\nreference: bare\n", []string{"reference", `"bare"`}},
		{"no modes", "name: x\nmodes: []\n", []string{"modes"}},
		{"min above max", "name: x\npingpong: {min_size: 10, max_size: 5}\n", []string{"pingpong.max_size", "min_size"}},
		{"negative min", "name: x\npingpong: {min_size: -1}\n", []string{"pingpong.min_size"}},
		{"coverage 0", "name: x\npingpong: {coverage: 0}\n", []string{"pingpong.coverage", "(0, 1]"}},
		{"coverage 1.5", "name: x\npingpong: {coverage: 1.5}\n", []string{"pingpong.coverage", "(0, 1]"}},
		{"coverage NaN", "name: x\npingpong: {coverage: .nan}\n", []string{"pingpong.coverage"}},
		{"repetitions 0", "name: x\npingpong: {repetitions: 0}\n", []string{"pingpong.repetitions"}},
		{"concurrency 0", "name: x\npingpong: {concurrency: 0}\n", []string{"pingpong.concurrency 0"}},
		{"chunk 0", "name: x\npingpong: {chunk: 0}\n", []string{"pingpong.chunk 0"}},
		{"retries -1", "name: x\npingpong: {retries: -1}\n", []string{"pingpong.retries -1"}},
		{"max_size above max_body", "name: x\npingpong: {max_size: 2000, max_body: 1000}\n", []string{"pingpong.max_size 2000", "max_body 1000"}},
		{"max_body 0", "name: x\npingpong: {max_size: 0, min_size: 0, max_body: 0}\n", []string{"pingpong.max_body 0"}},
		{"port 0", "name: x\npingpong: {port: 0}\n", []string{"pingpong.port 0"}},
		{"port 70000", "name: x\npingpong: {port: 70000}\n", []string{"pingpong.port 70000"}},
		{"conditions delay", "name: x\nconditions: {delay: 50}\n", []string{"conditions.delay \"50\": want a duration"}},
		{"link field unknown", "name: x\ntests: [{workload: rr, duration: 6s}]\nlinks: [{link: server, lag: 5ms}]\n", []string{`unknown field "links[].lag"`}},
		{"link delay above 10s", "name: x\ntests: [{workload: rr, duration: 6s}]\nlinks: [{link: server, delay: 11s}]\n", []string{"links[0].delay 11s: want 0 to 10s"}},
		{"flap past the test", "name: x\ntests: [{workload: rr, duration: 6s}, {workload: stream, duration: 3s}]\nlinks: [{link: server, flap: {at: [2s], down: 1s}}]\n", []string{"links[0].flap.at[0] 2s: with down 1s it ends at 3s, not before the shortest test's end (3s)"}},
		{"impairment unknown", "name: x\ntests: [{workload: rr, duration: 6s}]\nimpairments: {slow: [{link: server, delay: 1ms}]}\nvariants: [{name: a}, {name: b, impairment: fast}]\n", []string{`variants[1].impairment "fast": not in impairments`}},
		{"impairment link bad", "name: x\ntests: [{workload: rr, duration: 6s}]\nimpairments: {slow: [{link: server, jitter: 1ms}]}\n", []string{"impairments.slow[0].jitter 1ms: want 0 to delay (0s)"}},
		{"flap on ping-pong longer than a request's timeout", "name: x\npingpong: {timeout: 1s}\nlinks: [{link: pong, flap: {at: [2s], down: 1s}}]\n", []string{"links[0].flap.down 1s: not shorter than pingpong.timeout (1s)"}},
		{"disrupt on ping-pong", "name: x\npingpong: {}\ndisrupt: [{component: kubelet, node: server, at: [1s], down: restart}]\n", []string{"disrupt: disruptions fall in socket tests' time"}},
		{"disrupt past the test", "name: x\ntests: [{workload: rr, duration: 6s}, {workload: stream, duration: 3s}]\ndisrupt: [{component: cni-agent, node: client, at: [2s], down: 1s}]\n", []string{"disrupt[0].at[0] 2s: with down 1s it ends at 3s, not before the shortest test's end (3s)"}},
		{"disrupt unknown field", "name: x\ntests: [{workload: rr}]\ndisrupt: [{component: kubelet, node: server, at: [1s], down: restart, pod: x}]\n", []string{"disrupt[].pod"}},
		{"flap on ping-pong past the bound", "name: x\nlinks: [{link: pong, flap: {at: [10m], down: 1s}}]\n", []string{"links[0].flap.at[0] 10m0s: with down 1s it ends at 10m1s, after 10m0s"}},
		{"variant cores", "name: x\nvariants: [{cores: 1}, {cores: 999}]\n", []string{"variants[1].cores 999"}},
		{"variant twice", "name: x\nvariants: [{cores: 1}, {cores: 1}]\n", []string{"variants[1]", "twice"}},
		{"variant empty", "name: x\nvariants: [{cores: 1}, {}]\n", []string{"variants[1]: sets nothing"}},
		{"variant conntrack_max", "name: x\nvariants: [{cores: 1}, {conntrack_max: 1000}]\n", []string{"variants[1].conntrack_max 1000: the machine has one table size"}},
		{"variant unknown field", "name: x\nvariants: [{jumbo: true}]\n", []string{"jumbo"}},
		{"variant mtu", "name: x\nvariants: [{mtu: 1400}, {mtu: 400}]\n", []string{"variants[1].mtu 400", "576"}},
		{"drivers twice", "name: x\ndrivers: [docker, docker]\n", []string{"drivers", `"docker" is listed twice`}},
		{"empty name", "name: \"\"\n", []string{"name"}},
		{"no name", "modes: [bare]\n", []string{"name"}},
		{"bad name", "name: \"a b\"\n", []string{`name "a b"`}},
		{"timeout -1s", "name: x\npingpong: {timeout: -1s}\n", []string{"pingpong.timeout -1s"}},
		{"timeout 0", "name: x\npingpong: {timeout: 0s}\n", []string{"pingpong.timeout"}},
		{"wrong type modes", "name: x\nmodes: 3\n", []string{"line 2: modes: cannot unmarshal !!int `3` into []string"}},
		{"wrong type modes block", "name: x\nmodes:\n  a: b\n", []string{"line 3: modes: cannot unmarshal !!map"}},
		{"wrong type port", "name: x\npingpong: {port: eighty}\n", []string{"line 2: pingpong.port: cannot unmarshal"}},
		{"wrong type long value", "name: x\npingpong:\n  port: eightyeightyeighty\n", []string{"line 3: pingpong.port: cannot unmarshal"}},
		{"wrong type in list", "name: x\nmodes: [bare, {a: 1}]\n", []string{"line 2: modes[1]: cannot unmarshal !!map"}},
		{"wrong type nested map", "name: x\npingpong: {port: {a: 1}}\n", []string{"line 2: pingpong.port: cannot unmarshal !!map"}},
		{"two wrong types", "name: x\npingpong:\n  port: p\n  chunk: c\n", []string{"line 3: pingpong.port: cannot unmarshal", "; line 4: pingpong.chunk: cannot unmarshal"}},
		{"timeout without unit", "name: x\npingpong: {timeout: 60}\n", []string{"pingpong.timeout: cannot unmarshal !!int `60` into time.Duration"}},
		{"empty label key", "name: x\nlabels: {\"\": v}\n", []string{"labels"}},
		{"empty document", "", []string{"empty spec"}},
		{"comment only", "# nothing here\n", []string{"empty spec"}},
		{"not yaml", "name: [x\n", []string{"test.yaml"}},
		{"pingpong test and section", "name: x\npingpong: {port: 80}\ntests: [{workload: rr}, {workload: pingpong}]\n", []string{"tests[1]: workload pingpong and the pingpong section"}},
		{"two pingpong tests", "name: x\ntests: [{workload: pingpong}, {workload: rr}, {workload: pingpong}]\n", []string{"tests[2]: a second size sweep"}},
		{"unknown pingpong test field", "name: x\ntests: [{workload: rr}, {workload: pingpong, colour: 1}]\n", []string{"line 2: tests[1].colour: unknown field; pingpong takes min_size"}},
		{"unknown pingpong test servers field", "name: x\ntests: [{workload: pingpong, servers: {pingg: [x]}}]\n", []string{"tests[0].servers.pingg: unknown field"}},
		{"pingpong test wrong type", "name: x\ntests:\n  - workload: pingpong\n    port: eighty\n", []string{"line 4: tests[0].port: cannot unmarshal"}},
		{"pingpong test bad value", "name: x\ntests: [{workload: stream}, {workload: pingpong, concurrency: 0}]\n", []string{"tests[1].concurrency 0: must be in 1..1024"}},
		{"pingpong test bad servers", "name: x\ntests: [{workload: pingpong, servers: {}}]\n", []string{"tests[0].servers: names no server"}},
		{"pingpong and tests placed", "name: x\npingpong: {port: 80}\ntests: [{workload: rr}]\nplacement: {servers: 1}\n", []string{"placement: places socket tests or ping-pong, not both"}},
		{"pingpong and tests chained", "name: x\ntests: [{workload: rr}, {workload: pingpong}]\nchain: {hosts: 3}\n", []string{"chain: runs socket tests only"}},
		{"pingpong and tests too many cells", "name: x\ntests: [{workload: rr, repetitions: 1000, sweep: {param: request, from: 1, to: 1000, step: 1}}, {workload: pingpong}]\nmodes: [bare, bridge]\n", []string{"tests: 2010000 cells (1000000 case repetitions, from tests[].repetitions and sweeps, and 5000 chunks of ping-pong"}},
		{"unknown test field", "name: x\ntests: [{workload: rr, colour: 1}]\n", []string{"tests[0].colour: unknown field; rr takes protocol, omit"}},
		{"unknown sweep field", "name: x\ntests: [{workload: rr, sweep: {param: request, by: 2}}]\n", []string{`unknown field "tests[].sweep.by"`}},
		{"unknown workload", "name: x\ntests: [{workload: iperf}]\n", []string{`tests[0].workload: "iperf"`}},
		{"datagram too big", "name: x\ntests: [{workload: rr}, {workload: datagram, length: 65508}]\n", []string{"tests[1].length: 65508 is above the largest UDP datagram (65507)"}},
		{"negative test duration", "name: x\ntests: [{workload: stream, duration: -5s}]\n", []string{"tests[0].duration: -5s"}},
		{"unknown protocol", "name: x\ntests: [{workload: stream, protocol: sctp}]\n", []string{`tests[0].protocol: "sctp"`}},
		{"fit_mtu with sizes", "name: x\ntests: [{workload: rr, fit_mtu: true, request: 10}]\n", []string{"tests[0].fit_mtu: "}},
		{"busy_poll with crr", "name: x\ntests: [{workload: rr, protocol: crr, busy_poll: true}]\n", []string{"tests[0].busy_poll: for protocol tcp and udp"}},
		{"busy_poll on stream", "name: x\ntests: [{workload: stream, busy_poll: true}]\n", []string{"tests[0].busy_poll: not a parameter of stream"}},
		{"under_load on udp", "name: x\ntests: [{workload: rr, protocol: udp, under_load: 4}]\n", []string{"tests[0].under_load: for protocol tcp and crr"}},
		{"under_load too many", "name: x\ntests: [{workload: rr, under_load: 65}]\n", []string{"tests[0].under_load: 65 is outside 0..64"}},
		{"under_load negative", "name: x\ntests: [{workload: rr, under_load: -1}]\n", []string{"tests[0].under_load: -1"}},
		{"under_load swept too far", "name: x\ntests: [{workload: rr, sweep: {param: under_load, values: [0, 100]}}]\n", []string{"tests[0].sweep.values[1]"}},
		{"under_load on stream", "name: x\ntests: [{workload: stream, under_load: 2}]\n", []string{"tests[0].under_load: not a parameter of stream"}},
		{"test duration type", "name: x\ntests:\n  - workload: rr\n    duration: 10\n", []string{"line 4: tests[0].duration: cannot unmarshal"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(tc.doc)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want an error containing %q", tc.doc, tc.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "test.yaml: ") {
				t.Errorf("error %q does not start with the source name", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestValidateBoundaries(t *testing.T) {
	tests := []struct {
		name string
		edit func(*spec.Spec)
		ok   bool
	}{
		{"default with name", func(*spec.Spec) {}, true},
		{"coverage 1", func(s *spec.Spec) { s.PingPong.Coverage = 1 }, true},
		{"port 1", func(s *spec.Spec) { s.PingPong.Port = 1 }, true},
		{"port 65535", func(s *spec.Spec) { s.PingPong.Port = 65535 }, true},
		{"port 65536", func(s *spec.Spec) { s.PingPong.Port = 65536 }, false},
		{"max_size == max_body", func(s *spec.Spec) {
			s.PingPong.MaxBody, s.PingPong.Coverage = 16777216, 0.01
			s.PingPong.MaxSize = s.PingPong.MaxBody
		}, true},
		{"max_body at its bound", func(s *spec.Spec) { s.PingPong.MaxBody = spec.MaxBody }, true},
		{"max_body above its bound", func(s *spec.Spec) { s.PingPong.MaxBody = spec.MaxBody + 1 }, false},
		{"retries at the bound", func(s *spec.Spec) { s.PingPong.Retries = pingpong.MaxRetries }, true},
		{"retries above the bound", func(s *spec.Spec) { s.PingPong.Retries = pingpong.MaxRetries + 1 }, false},
		{"max_size == max_body+1", func(s *spec.Spec) { s.PingPong.MaxSize = s.PingPong.MaxBody + 1 }, false},
		{"min == max", func(s *spec.Spec) { s.PingPong.MinSize, s.PingPong.MaxSize = 7, 7 }, true},
		{"empty reference", func(s *spec.Spec) { s.Reference = "" }, true},
		{"retries 0", func(s *spec.Spec) { s.PingPong.Retries = 0 }, true},
		{"name 64 chars", func(s *spec.Spec) { s.Name = strings.Repeat("a", 64) }, true},
		{"name 65 chars", func(s *spec.Spec) { s.Name = strings.Repeat("a", 65) }, false},
		{"name starts with dot", func(s *spec.Spec) { s.Name = ".x" }, false},
		{"flap of pong's uplink", func(s *spec.Spec) {
			s.Links = []conditions.Link{{Link: "pong", Flap: &conditions.Flap{At: []time.Duration{time.Second}, Down: time.Second}}}
		}, true},
		{"flap in an impairment", func(s *spec.Spec) {
			s.Impairments = conditions.Impairments{"cut": {{Link: "pong", Flap: &conditions.Flap{At: []time.Duration{time.Second}, Down: 2 * time.Minute}}}}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := spec.Default()
			s.Name = "x"
			tc.edit(&s)
			err := s.Validate()
			if (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestSocketSpec(t *testing.T) {
	s, err := parse("name: x\nmodes: [bare, overlay]\ntests:\n  - workload: stream\n    protocol: udp\n    rate: 1G\n    duration: 2s\n    sweep: {param: length, from: 1000, to: 2000, step: 100}\n  - {workload: rr, fit_mtu: true, repetitions: 3}\n")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Socket() {
		t.Fatal("a spec with tests is not a socket spec")
	}
	cases, err := s.Cases()
	if err != nil || len(cases) != 12 {
		t.Fatalf("Cases: %d, %v; want 12", len(cases), err)
	}
	if cases[0].Test.Duration != 2*time.Second || cases[11].Test.Repetitions != 3 || !cases[11].FitsMTU() {
		t.Errorf("cases: %+v ... %+v", cases[0], cases[11])
	}
	// Its YAML leaves the pingpong section out and parses back.
	b, err := s.YAML()
	if err != nil || strings.Contains(string(b), "pingpong") {
		t.Fatalf("YAML: %v\n%s", err, b)
	}
	if _, err := spec.Parse(bytes.NewReader(b), "roundtrip"); err != nil {
		t.Fatalf("round trip: %v\n%s", err, b)
	}
}

func TestModeKeys(t *testing.T) {
	tests := []struct {
		name    string
		driver  string
		drivers []string
		modes   []string
		want    []string
	}{
		{"netns", "netns", nil, []string{"bare", "bridge"}, []string{"bare", "bridge"}},
		{"docker alone keeps plain names", "docker", nil, []string{"bare", "overlay"}, []string{"bare", "overlay"}},
		{"comparison: bare once", "netns", []string{"netns", "docker"}, []string{"bare", "host", "bridge"},
			[]string{"bare", "host", "bridge", "host@docker", "bridge@docker"}},
		{"docker first", "netns", []string{"docker", "netns"}, []string{"bridge"}, []string{"bridge", "bridge@netns"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := spec.Spec{Driver: tc.driver, Drivers: tc.drivers, Modes: tc.modes}
			got := s.ModeKeys()
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("ModeKeys = %v, want %v", got, tc.want)
			}
			for _, k := range got {
				m, d := s.SplitModeKey(k)
				want := s.RunDrivers()[0]
				if strings.Contains(k, "@") {
					want = k[strings.Index(k, "@")+1:]
				}
				if d != want || !strings.HasPrefix(k, m) {
					t.Errorf("SplitModeKey(%q) = %q, %q", k, m, d)
				}
			}
		})
	}
}

func TestVariants(t *testing.T) {
	s, err := spec.Parse(strings.NewReader("name: v\nmodes: [bare, overlay]\nconditions: {bandwidth: 100mbit}\n"+
		"variants: [{name: one, cores: 1}, {cores: 1, router: apart}]\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bare/one", "bare/cores=1,router=apart", "overlay/one", "overlay/cores=1,router=apart"}
	if got := s.ModeKeys(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("ModeKeys = %v, want %v", got, want)
	}
	if got := s.ReferenceKey(); got != "bare/one" {
		t.Errorf("ReferenceKey = %q", got)
	}
	labs := s.Labs()
	if c := labs[3].Conditions; c.Bandwidth != "100mbit" || c.Router != "apart" || c.Cores != 1 || labs[3].Mode != "overlay" {
		t.Errorf("lab 3 = %+v: the variant goes over the spec's conditions", labs[3])
	}
	if m, d := s.SplitModeKey("overlay/one"); m != "overlay" || d != "netns" {
		t.Errorf("SplitModeKey = %q, %q", m, d)
	}
	one, _ := spec.Parse(strings.NewReader("name: v\nmodes: [bare]\nvariants: [{cores: 1}]\n"), "test")
	if got := one.ModeKeys(); len(got) != 1 || got[0] != "bare" || one.Labs()[0].Conditions.Cores != 1 {
		t.Errorf("a single variant applies without renaming: %v %+v", got, one.Labs())
	}
}

// hostile are specs that once hung validation, ate memory, were accepted
// with meaningless values or named a CLI flag instead of the spec's field.
// Each must be refused at once, in one line naming the field as written.
var hostile = []struct {
	name string
	doc  string
	want string
}{
	{"instances too many", "name: x\ninstances: 9\n", "instances: 9 is outside 1..8"},
	{"instances negative", "name: x\ninstances: -1\n", "instances: -1 is outside 1..8"},
	{"instances times labs", "name: x\ninstances: 8\ndrivers: [netns, docker]\nmodes: [bare, host, bridge, macvlan, overlay]\n", "64"},
	{"tcp_congestion not a name", "name: x\nconditions: {tcp_congestion: \"cubic; rm\"}\n", "tcp_congestion"},
	{"tcp_congestion not in this kernel", "name: x\nconditions: {tcp_congestion: nosuchcc}\n", "tcp_congestion \"nosuchcc\""},
	{"sweep near int64's limit", "name: x\ntests:\n  - workload: stream\n    protocol: udp\n    sweep: {param: length, from: 9223372036854775800, to: 9223372036854775807, step: 5}\n",
		"tests[0].sweep.from: 9223372036854775800 is outside 0..1000000000000"},
	{"sweep step near int64's limit", "name: x\ntests: [{workload: stream, sweep: {param: length, from: 1, to: 1000, step: 9223372036854775807}}]\n",
		"tests[0].sweep.step: 9223372036854775807 is outside"},
	{"test repetitions 2000000", "name: x\ntests: [{workload: rr, repetitions: 2000000}]\n", "tests[0].repetitions: 2000000 is outside 0..1000"},
	{"test plan too big", "name: x\ntests: [{workload: stream, repetitions: 1000, sweep: {param: length, from: 1, to: 1000, step: 1}}, {workload: rr, repetitions: 1000}]\n",
		"tests: 5005000 cells"},
	{"cpu_stress NaN", "name: x\nconditions: {cpu_stress: .nan}\n", "conditions.cpu_stress NaN"},
	{"cpu_stress Inf in a variant", "name: x\nvariants: [{cpu_stress: .inf}]\n", "variants[0].cpu_stress +Inf"},
	{"cpu_stress -Inf", "name: x\nconditions: {cpu_stress: -.inf}\n", "conditions.cpu_stress -Inf"},
	{"coverage NaN", "name: x\npingpong: {coverage: .nan}\n", "pingpong.coverage NaN"},
	{"coverage Inf", "name: x\npingpong: {coverage: .inf}\n", "pingpong.coverage +Inf"},
	{"retries 1001", "name: x\npingpong: {retries: 1001}\n", "pingpong.retries 1001: must be in 0..1000"},
	{"bandwidth trailing space", "name: x\nconditions: {bandwidth: \"100mbit \"}\n", `conditions.bandwidth "100mbit "`},
	{"bandwidth overflowing", "name: x\nconditions: {bandwidth: 99999999999999999999gbit}\n", `conditions.bandwidth "99999999999999999999gbit"`},
	{"bandwidth in a variant", "name: x\nvariants: [{bandwidth: 2000gbit}]\n", "variants[0].bandwidth \"2000gbit\": above 1000gbit"},
	{"tcp_rmem overflowing", "name: x\nconditions: {tcp_rmem: \"4096 87380 99999999999999999999\"}\n", "conditions.tcp_rmem"},
	{"cpu_stress_on huge", "name: x\nconditions: {cpu_stress: 0.5, cpu_stress_on: 100000h, cpu_stress_off: 1s}\n", "conditions.cpu_stress_on 100000h0m0s"},
	{"pingpong repetitions", "name: x\npingpong: {repetitions: 2000000}\n", "pingpong.repetitions 2000000: must be in 1..100000"},
	{"pingpong concurrency", "name: x\npingpong: {concurrency: 1000000}\n", "pingpong.concurrency 1000000: must be in 1..1024"},
	{"pingpong chunk", "name: x\npingpong: {chunk: 1000000000}\n", "pingpong.chunk 1000000000: must be in 1..100000"},
	{"pingpong max_body", "name: x\npingpong: {max_body: 1099511627776}\n", "pingpong.max_body 1099511627776: must be in 1..4294967296"},
	{"pingpong timeout", "name: x\npingpong: {timeout: 100000h}\n", "pingpong.timeout 100000h0m0s: must be in (0s, 1h0m0s]"},
	{"pingpong too many sizes", "name: x\npingpong: {min_size: 0, max_size: 16777216, coverage: 1}\n", "pingpong.coverage 1: 16777217 sizes"},
	{"pingpong too many cells", "name: x\npingpong: {max_size: 500000, coverage: 1, chunk: 1}\n", "pingpong.chunk 1: 2500000 cells"},
	{"pingpong big cell", "name: x\npingpong: {chunk: 100000, repetitions: 10000}\n", "pingpong.chunk 100000, repetitions 10000: 500000000 requests in one cell"},
	{"pingpong too many requests", "name: x\npingpong: {coverage: 1, chunk: 1000, repetitions: 100}\n", "pingpong.repetitions 100: 250000000 requests"},
	{"too many variants", "name: x\nvariants: [" + strings.Repeat("{cores: 1},", 33) + "]\n", "variants: 33, more than 32"},
	{"too many labs", "name: x\ndrivers: [netns, docker]\nmodes: [bare, host, bridge, macvlan, overlay]\nvariants: [" +
		"{name: a, offloads: \"on\"}, {name: b, offloads: \"off\"}, {name: c, mtu: 1400}, {name: d, mtu: 1300}, {name: e, mtu: 1200}, {name: f, mtu: 1100}, {name: g, mtu: 1000}, {name: h, mtu: 900}]\n",
		"modes, drivers, variants, instances: 72 labs side by side, more than 64"},
	{"variant label too long", "name: x\nvariants: [{cores: 1}, {tcp_rmem: \"" + strings.Repeat("0", 300) + "1 2 3\"}]\n", "variants[1]: its label \"rmem=000"},
	{"label too long", "name: x\nlabels: {k: " + strings.Repeat("v", 300) + "}\n", "labels.k: 300 bytes"},
	{"datagram length names the field", "name: x\ntests: [{workload: datagram, length: 70000}]\n", "tests[0].length: 70000 is above the largest UDP datagram (65507)"},
	{"rr protocol names the field", "name: x\ntests: [{workload: rr, protocol: sctp}]\n", `tests[0].protocol: "sctp" is not a protocol of rr`},
	{"test rate trailing space", "name: x\ntests: [{workload: jitter, rate: \"10M \"}]\n", `tests[0].rate: "10M "`},
	{"test rate overflowing", "name: x\ntests: [{workload: stream, rate: 99999999999999999999G}]\n", `tests[0].rate: "99999999999999999999G"`},
	{"test parallel", "name: x\ntests: [{workload: rr, parallel: 100000}]\n", "tests[0].parallel: 100000 is outside 1..256"},
	{"test count", "name: x\ntests: [{workload: datagram, count: 9223372036854775807}]\n", "tests[0].count: 9223372036854775807 is outside"},
	{"test duration", "name: x\ntests: [{workload: stream, duration: 2000000h}]\n", "tests[0].duration: 2000000h0m0s is outside"},
	// Flap times whose sums wrap around past 2^63 ns to a negative time,
	// which passed every bound on a flap's end.
	{"flap down forever", "name: x\ntests: [{workload: stream, duration: 6s}]\nlinks: [{link: server, flap: {at: [1s], down: 2562047h47m16.854775807s}}]\n",
		"links[0].flap.down 2562047h47m16.854775807s: not shorter than the shortest test (6s)"},
	{"flap at the end of time", "name: x\ntests: [{workload: stream, duration: 6s}]\nlinks: [{link: server, flap: {at: [2562047h47m16s], down: 1s}}]\n",
		"links[0].flap.at[0] 2562047h47m16s: not before the shortest test's end (6s)"},
	{"impairment's flap at the end of time", "name: x\ntests: [{workload: stream, duration: 6s}]\nimpairments: {cut: [{link: server, flap: {at: [1s, 2562047h47m16s], down: 1s}}]}\nvariants: [{name: clean}, {impairment: cut}]\n",
		"impairments.cut[0].flap.at[1] 2562047h47m16s: not before the shortest test's end (6s)"},
	{"ping-pong flap at the end of time", "name: x\nlinks: [{link: pong, flap: {at: [2562047h47m16s], down: 1s}}]\n",
		"links[0].flap.at[0] 2562047h47m16s: after 10m0s"},
	{"test omit and duration summing past the end of time", "name: x\ntests: [{workload: stream, omit: 2562047h, duration: 2562047h}]\nlinks: [{link: server, flap: {at: [1s], down: 1s}}]\n",
		"tests[0].duration: 2562047h0m0s is outside 0s..24h0m0s"},
	{"sweep value", "name: x\ntests: [{workload: stream, protocol: udp, sweep: {param: length, values: [\"1400\", \"70000\"]}}]\n", "tests[0].sweep.values[1]: 70000 is above"},
	{"mapping of 150,000 keys", "name: x\nlabels: {" + strings.Repeat("k: v, ", 150000) + "}\n", "line 2: labels: 150000 keys, more than 1000"},
	{"keys repeated", "name: x\nlabels: {" + strings.Repeat("k: v, ", 900) + "}\n", `line 2: labels: key "k" is there twice (first on line 2)`},
	{"key repeated at the top", "name: x\nname: y\n", `line 2: the document: key "name" is there twice (first on line 1)`},
	{"mappings of repeated keys", "name: x\nvariants:\n" + strings.Repeat("  - {"+strings.Repeat("cores: 1, ", 900)+"}\n", 100), `line 3: variants[0]: key "cores" is there twice`},
	{"sequence of 300,000 values", "name: x\ntests: [{workload: jitter, sweep: {param: rate, values: [" + strings.Repeat("1M,", 300000) + "]}}]\n",
		"line 2: tests[0].sweep.values: 300000 items, more than 10000"},
	{"9,000 wrong types", "name: x\nmodes:\n" + strings.Repeat("  - {a: 1}\n", 9000), "line 3: modes[0]: cannot unmarshal !!map into string; line 4: modes[1]: cannot unmarshal !!map into string; line 5: modes[2]: cannot unmarshal !!map into string; and 8997 more"},
	{"spec too large", "name: x\ndescription: \"" + strings.Repeat("d", MaxSpecBytesForTest) + "\"\n", "larger than 1048576 bytes"},
}

// MaxSpecBytesForTest keeps the hostile table a plain literal.
const MaxSpecBytesForTest = spec.MaxSpecBytes

func TestHostileSpecs(t *testing.T) {
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := parse(tc.doc); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Parse did not return within 5s")
			}
			if err == nil {
				t.Fatalf("Parse succeeded, want an error containing %q", tc.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not contain %q", msg, tc.want)
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "--") {
				t.Errorf("error is not one line naming spec fields: %q", msg)
			}
		})
	}
}

// TestRetriesZero: retries 0 is no retries, kept as 0 (the default, when
// the field is left out, is the original ping's 100).
func TestRetriesZero(t *testing.T) {
	s, err := parse("name: x\npingpong: {retries: 0}\n")
	if err != nil || s.PingPong.Retries != 0 {
		t.Fatalf("retries 0: %+v, %v", s.PingPong, err)
	}
	s, err = parse("name: x\npingpong: {retries: 100}\n")
	if err != nil || s.PingPong.Retries != 100 {
		t.Fatalf("retries 100: %v", err)
	}
}

// TestPlanSize: the computed size is the built plan's, for every preset.
func TestPlanSize(t *testing.T) {
	for _, n := range presets.Names() {
		s, err := spec.Preset(n)
		if err != nil {
			t.Fatal(err)
		}
		z, err := s.PlanSize()
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if got := int64(len(s.Labs())); z.Labs != got {
			t.Errorf("%s: %d labs, built %d", n, z.Labs, got)
		}
		if s.Socket() {
			cases, err := s.Cases()
			if err != nil {
				t.Fatal(err)
			}
			units := int64(0)
			for _, c := range cases {
				units += int64(max(c.Test.Repetitions, 1))
			}
			if z.Units != units || z.Cells != units*z.Labs {
				t.Errorf("%s: %+v, built %d units", n, z, units)
			}
			continue
		}
		sizes := int64(len(s.PingPong.Plan().Sizes()))
		if z.Sizes != sizes || z.Requests != sizes*int64(s.PingPong.Repetitions)*z.Labs {
			t.Errorf("%s: %+v, built %d sizes", n, z, sizes)
		}
	}
}

// A ping-pong test among the tests, or the pingpong section beside them,
// is one shape: its parameters in PingPong, the socket tests in Tests;
// shown and stored as written, and read back the same.
func TestPingPongTest(t *testing.T) {
	tests := []struct {
		name, doc string
		wantAt    int // the entry's index in the stored tests
	}{
		{"entry", "name: x\ntests:\n  - {workload: stream, duration: 1s}\n  - workload: pingpong\n    max_size: 1000\n    repetitions: 3\n    timeout: 2s\n    servers: {pong: [pong, '{listen}']}\n  - {workload: rr}\n", 1},
		{"section", "name: x\npingpong: {max_size: 1000, repetitions: 3, timeout: 2s, servers: {pong: [pong, '{listen}']}}\ntests:\n  - {workload: stream, duration: 1s}\n  - {workload: rr}\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parse(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			check := func(how string, s spec.Spec) {
				t.Helper()
				pp := s.PingPong
				if !s.RunsPingPong() || !s.Socket() || !s.Mixed() || len(s.Tests) != 2 || s.Tests[1].Workload != "rr" {
					t.Fatalf("%s: runs ping-pong %v, socket %v, tests %+v", how, s.RunsPingPong(), s.Socket(), s.Tests)
				}
				if pp.MaxSize != 1000 || pp.Repetitions != 3 || pp.Timeout != 2*time.Second || pp.Concurrency != 1 || pp.Servers == nil || len(pp.Servers.Pong) != 2 {
					t.Errorf("%s: pingpong = %+v", how, pp)
				}
				if z, err := s.PlanSize(); err != nil || z.Units != 10+2 {
					t.Errorf("%s: PlanSize = %+v, %v; want 10 chunks and 2 cases", how, z, err)
				}
				if o := s.PingPongOnly(); o.Socket() || !o.RunsPingPong() {
					t.Errorf("%s: PingPongOnly runs sockets", how)
				}
				if o := s.SocketsOnly(); !o.Socket() || o.RunsPingPong() {
					t.Errorf("%s: SocketsOnly runs ping-pong", how)
				}
			}
			check("parsed", s)
			y, err := s.YAML()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(y), "pingpong:") || !strings.Contains(string(y), "workload: pingpong") {
				t.Errorf("YAML holds no ping-pong test:\n%s", y)
			}
			back, err := spec.Parse(bytes.NewReader(y), "shown")
			if err != nil {
				t.Fatalf("YAML does not parse back: %v\n%s", err, y)
			}
			check("from YAML", back)
			j, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var stored struct {
				Tests []map[string]any `json:"tests"`
			}
			if err := json.Unmarshal(j, &stored); err != nil || len(stored.Tests) != 3 || stored.Tests[tc.wantAt]["workload"] != "pingpong" {
				t.Errorf("stored tests: %s", j)
			}
			var loaded spec.Spec
			if err := json.Unmarshal(j, &loaded); err != nil {
				t.Fatal(err)
			}
			check("from JSON", loaded)
		})
	}
}

// A spec of ping-pong alone is stored as it always was: no tests, its
// section whole.
func TestPingPongOnlyStoredAsBefore(t *testing.T) {
	for _, doc := range []string{"name: x\npingpong: {max_size: 1000}\n", "name: x\ntests: [{workload: pingpong, max_size: 1000}]\n"} {
		s, err := parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		if s.Socket() || !s.RunsPingPong() || s.PingPong.MaxSize != 1000 {
			t.Fatalf("%q: %+v", doc, s)
		}
		j, _ := json.Marshal(s)
		if strings.Contains(string(j), `"tests"`) != strings.Contains(doc, "tests") {
			t.Errorf("%q stored as %s", doc, j)
		}
		var loaded spec.Spec
		if err := json.Unmarshal(j, &loaded); err != nil || loaded.Socket() || !loaded.RunsPingPong() || loaded.PingPong.MaxSize != 1000 {
			t.Errorf("%q: loaded %+v, %v", doc, loaded, err)
		}
	}
	s, _ := parse("name: x\npingpong: {max_size: 1000}\n")
	j, _ := json.Marshal(s)
	if strings.Contains(string(j), `"tests"`) {
		t.Errorf("stored with tests: %s", j)
	}
}

// The defaults a spec starts from are ping-pong's declared ones, field by
// field, and every field of the section but servers is declared.
func TestPingPongDefaultsDeclared(t *testing.T) {
	b, err := yaml.Marshal(spec.Default().PingPong)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]string
	if err := yaml.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for _, p := range pingpong.Descriptor.Params() {
		if got, ok := fields[p.Name]; !ok || got != p.Default {
			t.Errorf("%s: default %q, declared %q", p.Name, got, p.Default)
		}
		delete(fields, p.Name)
	}
	if len(fields) != 0 {
		t.Errorf("fields not declared: %v", fields)
	}
}
