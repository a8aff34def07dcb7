package registry_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
	"gopkg.in/yaml.v3"
)

type (
	Test  = workload.Test
	Sweep = workload.Sweep
)

const MaxCases = workload.MaxCases

var (
	Expand = registry.Expand
	Counts = registry.Counts
)

func lookup(t *testing.T, name string) workload.Socket {
	t.Helper()
	w, ok := registry.Lookup(name)
	if !ok {
		t.Fatalf("%s is not registered", name)
	}
	return w
}

// TestExpandErrors: every bad test is one line naming the spec's field as
// tests[i].FIELD (never a CLI flag), and is refused before any sweep is
// expanded.
func TestExpandErrors(t *testing.T) {
	sw := func(param string, from, to, step int64) *Sweep {
		return &Sweep{Param: param, From: from, To: to, Step: step}
	}
	vals := func(param string, v ...string) *Sweep { return &Sweep{Param: param, Values: v} }
	tests := []struct {
		name string
		test Test
		want string
	}{
		{"unknown workload", Test{Workload: "ping"}, `tests[0].workload: "ping" is not a workload`},
		{"datagram too big", Test{Workload: "datagram", Params: workload.Params{"length": 70000}}, "tests[0].length: 70000 is above the largest UDP datagram (65507)"},
		{"datagram too small", Test{Workload: "datagram", Params: workload.Params{"length": 3}}, "tests[0].length: 3 is below 24"},
		{"stream udp too big", Test{Workload: "stream", Params: workload.Params{"protocol": "udp", "length": 65508}}, "tests[0].length: 65508 is above the largest UDP datagram (65507)"},
		{"stream tcp too big", Test{Workload: "stream", Params: workload.Params{"length": 1 << 30}}, "tests[0].length: 1073741824 is above the largest TCP write"},
		{"negative length", Test{Workload: "jitter", Params: workload.Params{"length": -1}}, "tests[0].length: -1 is negative"},
		{"negative duration", Test{Workload: "rr", Duration: -time.Second}, "tests[0].duration: -1s is outside 0s..24h0m0s"},
		{"huge duration", Test{Workload: "stream", Duration: 100000 * time.Hour}, "tests[0].duration: 100000h0m0s is outside"},
		{"huge omit", Test{Workload: "stream", Params: workload.Params{"omit": 25 * time.Hour}}, "tests[0].omit: 25h0m0s is outside"},
		{"tiny interval", Test{Workload: "jitter", Interval: time.Nanosecond}, "tests[0].interval: 1ns is outside 10ms..24h0m0s"},
		{"too many intervals", Test{Workload: "stream", Duration: 24 * time.Hour, Interval: 10 * time.Millisecond}, "tests[0].interval: 10ms cuts"},
		{"unknown protocol", Test{Workload: "stream", Params: workload.Params{"protocol": "sctp"}}, `tests[0].protocol: "sctp" is not a protocol of stream (tcp, udp)`},
		{"unknown rr mode", Test{Workload: "rr", Params: workload.Params{"protocol": "sctp"}}, `tests[0].protocol: "sctp" is not a protocol of rr (tcp, udp, crr)`},
		{"stream parallel", Test{Workload: "stream", Params: workload.Params{"parallel": 1000000}}, "tests[0].parallel: 1000000 is outside 1..128"},
		{"stream copy over udp", Test{Workload: "stream", Params: workload.Params{"protocol": "udp", "copy": true}}, "tests[0].copy: only for TCP as fast as possible"},
		{"stream copy paced", Test{Workload: "stream", Params: workload.Params{"rate": "1G", "copy": true}}, "tests[0].copy: only for TCP as fast as possible"},
		{"stream threads above parallel", Test{Workload: "stream", Params: workload.Params{"parallel": 2, "threads": 4}}, "tests[0].threads: 4: more than the 2 parallel stream(s)"},
		{"stream threads default parallel", Test{Workload: "stream", Params: workload.Params{"threads": 2}}, "tests[0].threads: 2: more than the 1 parallel stream(s)"},
		{"stream threads above bound", Test{Workload: "stream", Params: workload.Params{"parallel": 128, "threads": 129}}, "tests[0].threads: 129"},
		{"stream threads over udp", Test{Workload: "stream", Params: workload.Params{"protocol": "udp", "parallel": 4, "threads": 2}}, "tests[0].threads: only for TCP as fast as possible"},
		{"stream threads paced", Test{Workload: "stream", Params: workload.Params{"rate": "1G", "parallel": 4, "threads": 2}}, "tests[0].threads: only for TCP as fast as possible"},
		{"copy on rr", Test{Workload: "rr", Params: workload.Params{"copy": true}}, "tests[0].copy: not a parameter of rr"},
		{"rr parallel", Test{Workload: "rr", Params: workload.Params{"parallel": -1}}, "tests[0].parallel: -1 is outside 1..256"},
		{"rr udp request", Test{Workload: "rr", Params: workload.Params{"protocol": "udp", "request": 70000}}, "tests[0].request: 70000 is above the largest UDP datagram (65507)"},
		{"rr udp small request", Test{Workload: "rr", Params: workload.Params{"protocol": "udp", "request": 2, "response": 100}}, "tests[0].response: 100: a UDP request under 4 bytes"},
		{"rr timeout", Test{Workload: "rr", Params: workload.Params{"timeout": 1000 * time.Hour}}, "tests[0].timeout: 1000h0m0s is outside 0s..1h0m0s"},
		{"datagram count", Test{Workload: "datagram", Params: workload.Params{"count": int64(1e12)}}, "tests[0].count: 1000000000000 is outside 0..1000000000"},
		{"negative count", Test{Workload: "datagram", Params: workload.Params{"count": -1}}, "tests[0].count: -1 is outside"},
		{"param of another workload", Test{Workload: "jitter", Params: workload.Params{"request": 10}}, "tests[0].request: not a parameter of jitter"},
		{"bad rate", Test{Workload: "jitter", Params: workload.Params{"rate": "fast"}}, `tests[0].rate: "fast": want bits per second`},
		{"rate trailing space", Test{Workload: "jitter", Params: workload.Params{"rate": "100M "}}, `tests[0].rate: "100M ": want bits per second`},
		{"rate leading space", Test{Workload: "datagram", Params: workload.Params{"rate": " 1G"}}, `tests[0].rate: " 1G"`},
		{"rate exponent", Test{Workload: "datagram", Params: workload.Params{"rate": "1e9"}}, `tests[0].rate: "1e9"`},
		{"rate overflowing", Test{Workload: "stream", Params: workload.Params{"rate": "99999999999999999999G"}}, `tests[0].rate: "99999999999999999999G"`},
		{"rate above 1T", Test{Workload: "stream", Params: workload.Params{"rate": "2T"}}, `tests[0].rate: "2T": above 1T`},
		{"jitter rate 0", Test{Workload: "jitter", Params: workload.Params{"rate": "0"}}, `tests[0].rate: "0": jitter needs a rate > 0`},
		{"negative repetitions", Test{Workload: "rr", Repetitions: -1}, "tests[0].repetitions: -1 is outside 0..1000"},
		{"huge repetitions", Test{Workload: "rr", Repetitions: 2000000}, "tests[0].repetitions: 2000000 is outside 0..1000"},
		{"long name", Test{Workload: "rr", Name: strings.Repeat("n", 65)}, "tests[0].name: 65 bytes"},
		{"fit_mtu with sizes", Test{Workload: "rr", Params: workload.Params{"fit_mtu": true, "request": 10}}, "tests[0].fit_mtu: sets request and response"},
		{"sweep unknown param", Test{Workload: "stream", Sweep: vals("request", "1")}, `tests[0].sweep.param: "request": stream sweeps parallel, threads, length, rate`},
		{"sweep both", Test{Workload: "stream", Sweep: &Sweep{Param: "length", Values: []string{"1"}, Step: 1}}, "tests[0].sweep: give values or from/to/step, not both"},
		{"sweep no step", Test{Workload: "stream", Sweep: sw("length", 1000, 2000, 0)}, "tests[0].sweep.step: 0 is outside 1.."},
		{"sweep backwards", Test{Workload: "stream", Sweep: sw("length", 2000, 1000, 100)}, "tests[0].sweep.to: 1000 is below sweep.from 2000"},
		{"sweep too long", Test{Workload: "stream", Sweep: sw("length", 1, 100000, 1)}, "tests[0].sweep.step: from 1 to 100000 by 1 is 100000 values, more than 1000"},
		{"sweep near int64's limit", Test{Workload: "stream", Sweep: sw("length", 9223372036854775800, 9223372036854775807, 5), Params: workload.Params{"protocol": "udp"}}, "tests[0].sweep.from: 9223372036854775800 is outside 0..1000000000000"},
		{"sweep to near int64's limit", Test{Workload: "stream", Sweep: sw("length", 1, 9223372036854775807, 1<<62)}, "tests[0].sweep.to: 9223372036854775807 is outside"},
		{"sweep negative from", Test{Workload: "stream", Sweep: sw("length", -9223372036854775808, 1000, 1)}, "tests[0].sweep.from: -9223372036854775808 is outside"},
		{"sweep huge step", Test{Workload: "stream", Sweep: sw("length", 1, 2, 9223372036854775807)}, "tests[0].sweep.step: 9223372036854775807 is outside"},
		{"sweep from invalid", Test{Workload: "stream", Sweep: sw("length", 10, 2000, 10), Params: workload.Params{"protocol": "udp"}}, "tests[0].sweep.from: 10 is below 24"},
		{"sweep to invalid", Test{Workload: "stream", Sweep: sw("length", 1000, 70000, 1000), Params: workload.Params{"protocol": "udp"}}, "tests[0].sweep.to: 70000 is above the largest UDP datagram"},
		{"sweep not integer", Test{Workload: "stream", Sweep: vals("length", "big")}, `tests[0].sweep.values[0]: "big": want a whole number`},
		{"sweep value signed", Test{Workload: "stream", Sweep: vals("length", "+5")}, `tests[0].sweep.values[0]: "+5": want a whole number`},
		{"sweep value leading zero", Test{Workload: "stream", Sweep: vals("length", "1400", "01400")}, `tests[0].sweep.values[1]: "01400": want a whole number`},
		{"sweep value overflowing", Test{Workload: "stream", Sweep: vals("length", "99999999999999999999")}, `tests[0].sweep.values[0]: "99999999999999999999": want a whole number`},
		{"sweep value invalid", Test{Workload: "stream", Sweep: vals("length", "1400", "70000"), Params: workload.Params{"protocol": "udp"}}, "tests[0].sweep.values[1]: 70000 is above the largest UDP datagram (65507)"},
		{"sweep value twice", Test{Workload: "stream", Sweep: vals("length", "1400", "1400")}, `tests[0].sweep.values[1]: "1400" is listed twice`},
		{"sweep rate garbage", Test{Workload: "jitter", Sweep: vals("rate", "10M", "10M x")}, `tests[0].sweep.values[1]: "10M x"`},
		{"sweep too many values", Test{Workload: "jitter", Sweep: vals("rate", make([]string, 1001)...)}, "tests[0].sweep.values: 1001 values, more than 1000"},
		{"sweep other field", Test{Workload: "rr", Sweep: vals("request", "100", "2"), Params: workload.Params{"protocol": "udp", "response": 100}}, "tests[0].response: 100: a UDP request under 4 bytes cannot carry the response size; use request >= 4 or response 2 (with sweep request=2)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Expand([]Test{tc.test})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Expand: %v, want an error containing %q", err, tc.want)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, "--") {
				t.Errorf("error is not one line naming spec fields: %q", msg)
			}
		})
	}
}

// TestExpandBounded: a test whose cases would be too many is refused from
// its fields alone, without expanding it.
func TestExpandBounded(t *testing.T) {
	many := make([]Test, 0, 2*MaxCases)
	for range 2 * MaxCases {
		many = append(many, Test{Workload: "rr"})
	}
	if _, err := Expand(many); err == nil || !strings.Contains(err.Error(), "tests: 2000 tests, more than 1000") {
		t.Errorf("2000 tests: %v", err)
	}
	two := []Test{
		{Workload: "stream", Sweep: &Sweep{Param: "length", From: 1, To: 1000, Step: 1}},
		{Workload: "stream", Sweep: &Sweep{Param: "length", From: 1, To: 1000, Step: 1}},
	}
	if _, err := Expand(two); err == nil || !strings.Contains(err.Error(), "tests: 2000 cases") {
		t.Errorf("2 × 1000 cases: %v", err)
	}
	counts, err := Counts([]Test{{Workload: "rr"}, {Workload: "stream", Sweep: &Sweep{Param: "length", From: 1000, To: 2000, Step: 100}}, {Workload: "jitter", Sweep: &Sweep{Param: "rate", Values: []string{"1M", "2M"}}}})
	if err != nil || !slices.Equal(counts, []int{1, 11, 2}) {
		t.Errorf("Counts = %v, %v; want [1 11 2]", counts, err)
	}
}

// TestSpecFields: a workload's own error, naming its CLI flags, is turned
// into one naming the spec's fields.
func TestSpecFields(t *testing.T) {
	for _, tc := range []struct{ workload, msg, want string }{
		{"datagram", "--size 70000: must be between 24 and 65507 bytes", "length: 70000: must be between 24 and 65507 bytes"},
		{"rr", `--protocol "sctp": want tcp, udp or crr`, `protocol: "sctp": want tcp, udp or crr`},
		{"rr", "--response 9: use --request >= 4 or --response 1", "response: 9: use request >= 4 or response 1"},
		{"stream", "--interval 1ms: more than a million intervals in 24h", "interval: 1ms: more than a million intervals in 24h"},
		{"datagram", "--count or --time: give at least one", "workload: datagram: count or duration: give at least one"},
		{"jitter", "something else", "workload: jitter: something else"},
	} {
		if got := workload.SpecFields(lookup(t, tc.workload), tc.msg).Error(); got != tc.want {
			t.Errorf("specFields(%s, %q) = %q, want %q", tc.workload, tc.msg, got, tc.want)
		}
	}
}

func TestExpandSweep(t *testing.T) {
	cases, err := Expand([]Test{
		{Workload: "rr", Params: workload.Params{"protocol": "udp"}},
		{Workload: "stream", Params: workload.Params{"protocol": "udp", "rate": "100M"}, Sweep: &Sweep{Param: "length", From: 1000, To: 2000, Step: 100}},
		{Name: "big", Workload: "jitter", Sweep: &Sweep{Param: "rate", Values: []string{"1M", "10M"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 1+11+2 {
		t.Fatalf("%d cases, want 14", len(cases))
	}
	if c := cases[0]; c.Label != "rr udp" || c.Index != 0 || c.Param != "" {
		t.Errorf("case 0: %+v", c)
	}
	if c := cases[1]; c.Label != "stream udp length=1000" || c.Test.Params.Int("length") != 1000 || c.Index != 1 || c.Test.Sweep != nil {
		t.Errorf("case 1: %+v", c)
	}
	if c := cases[11]; c.Value != "2000" || c.Test.Params.Int("length") != 2000 {
		t.Errorf("case 11: %+v", c)
	}
	if c := cases[13]; c.Label != "big rate=10M" || c.Test.Params.Text("rate") != "10M" || c.Index != 2 {
		t.Errorf("case 13: %+v", c)
	}
}

func TestClientArgs(t *testing.T) {
	tests := []struct {
		test Test
		want []string
	}{
		{Test{Workload: "stream"}, []string{"stream", "--server", "198.18.0.2:5201", "--json", "--time", "10s", "--interval", "1s"}},
		{Test{Workload: "stream", Duration: 5 * time.Second, Params: workload.Params{"protocol": "udp", "omit": time.Second, "parallel": 4, "length": 1400, "rate": "1G"}},
			[]string{"stream", "--server", "198.18.0.2:5201", "--json", "--time", "5s", "--interval", "1s", "--udp", "--omit", "1s", "--parallel", "4", "--length", "1400", "--bitrate", "1G"}},
		{Test{Workload: "stream", Params: workload.Params{"parallel": 4, "copy": true}},
			[]string{"stream", "--server", "198.18.0.2:5201", "--json", "--time", "10s", "--interval", "1s", "--parallel", "4", "--copy"}},
		{Test{Workload: "rr", Params: workload.Params{"protocol": "crr", "request": 64, "response": 1024, "timeout": 2 * time.Second}},
			[]string{"rr", "--server", "198.18.0.2:5202", "--json", "--time", "10s", "--interval", "1s", "--protocol", "crr", "--request", "64", "--response", "1024", "--timeout", "2s"}},
		{Test{Workload: "jitter", Duration: 120 * time.Second, Params: workload.Params{"rate": "10M", "length": 1470}},
			[]string{"jitter", "--server", "198.18.0.2:5203", "--json", "--time", "2m0s", "--interval", "1s", "--length", "1470", "--bitrate", "10M"}},
		{Test{Workload: "datagram", Params: workload.Params{"count": 1000}},
			[]string{"datagram", "--server", "198.18.0.2:5203", "--json", "--time", "0s", "--interval", "1s", "--count", "1000"}},
	}
	for _, tc := range tests {
		cases, err := Expand([]Test{tc.test})
		if err != nil {
			t.Fatalf("%+v: %v", tc.test, err)
		}
		got := cases[0].ClientArgs("198.18.0.2")
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v:\n got %q\nwant %q", tc.test, got, tc.want)
		}
	}
}

func TestServers(t *testing.T) {
	for _, tc := range []struct {
		workload, role string
		port           int
	}{{"stream", "stream-server", 5201}, {"rr", "rr-server", 5202}, {"jitter", "udp-server", 5203}, {"datagram", "udp-server", 5203}} {
		s := lookup(t, tc.workload).Server()
		if s.Role != tc.role || s.Port != tc.port || !slices.Contains(s.Protocols, "udp") || !slices.Contains(s.Protocols, "tcp") {
			t.Errorf("%s: %+v", tc.workload, s)
		}
	}
}

// TestMovedBytes: each workload says what its total moved, from the bare
// record an older run stored and from the envelope alike.
func TestMovedBytes(t *testing.T) {
	for _, tc := range []struct {
		workload, line string
		want           int64
	}{
		{"stream", `{"workload":"stream","duration_s":1,"receiver_bytes":1000,"sender_bytes":1200}`, 1000},
		{"stream", `{"workload":"stream","kind":"end","duration_s":1,"receiver_bytes":1000,"sender_bytes":1200}`, 1000},
		{"rr", `{"workload":"rr","type":"result","transactions":10,"request_size":1,"response_size":99}`, 1000},
		{"jitter", `{"workload":"jitter","total":true,"bytes":4410}`, 4410},
		{"datagram", `{"workload":"datagram","kind":"end","bytes":4410}`, 4410},
	} {
		tot, err := lookup(t, tc.workload).Total(json.RawMessage(tc.line))
		if err != nil || tot.Moved != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.line, tot.Moved, err, tc.want)
		}
	}
	if _, err := lookup(t, "rr").Total(json.RawMessage(`not json`)); err == nil {
		t.Error("a total that is not JSON reads")
	}
}

func TestPlanned(t *testing.T) {
	for _, tc := range []struct {
		test Test
		want time.Duration
	}{
		{Test{Workload: "stream"}, 10 * time.Second},
		{Test{Workload: "stream", Duration: 5 * time.Second, Params: workload.Params{"omit": time.Second}}, 6 * time.Second},
		{Test{Workload: "datagram", Params: workload.Params{"count": 100}}, 0},
		{Test{Workload: "datagram", Duration: 3 * time.Second, Params: workload.Params{"count": 100}}, 3 * time.Second},
	} {
		if got := tc.test.Planned(); got != tc.want {
			t.Errorf("%+v: Planned() = %s, want %s", tc.test, got, tc.want)
		}
	}
}

func TestFanOutFields(t *testing.T) {
	vals := func(param string, v ...string) *workload.Sweep { return &workload.Sweep{Param: param, Values: v} }
	for _, tc := range []struct {
		name string
		test workload.Test
		want string // "" for no error
	}{
		{"clients", workload.Test{Workload: "stream", Clients: 20}, ""},
		{"pairs", workload.Test{Workload: "rr", Clients: 4, Pairs: true}, ""},
		{"processes", workload.Test{Workload: "jitter", Clients: 4, Processes: 16}, ""},
		{"sweep clients", workload.Test{Workload: "stream", Sweep: vals("clients", "1", "2", "4", "8", "16", "20")}, ""},
		{"too many clients", workload.Test{Workload: "stream", Clients: 251}, "tests[0].clients: 251 is outside 0..250"},
		{"negative servers", workload.Test{Workload: "stream", Servers: -1}, "tests[0].servers: -1 is outside"},
		{"too many processes", workload.Test{Workload: "datagram", Processes: 65}, "tests[0].processes: 65 is outside 0..64"},
		{"pairs and servers", workload.Test{Workload: "stream", Pairs: true, Servers: 2}, "tests[0].pairs: sets servers to clients"},
		{"swept clients too many", workload.Test{Workload: "stream", Sweep: vals("clients", "1", "300")}, "tests[0].sweep.values[1]: 300 is outside 0..250"},
		{"sweep servers with pairs", workload.Test{Workload: "stream", Pairs: true, Sweep: vals("servers", "1")}, "tests[0].sweep.param: servers: pairs sets servers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := registry.Expand([]workload.Test{tc.test})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Expand: %v, want %q", err, tc.want)
			}
		})
	}
	c := workload.Test{Clients: 3, Pairs: true, Processes: 2}
	if c.ClientCount(20) != 3 || c.ServerCount(20) != 3 || c.ProcessCount() != 2 || !c.FansOut(20) {
		t.Errorf("counts of %+v: %d clients, %d servers, %d processes", c, c.ClientCount(20), c.ServerCount(20), c.ProcessCount())
	}
	if d := (workload.Test{}); d.ClientCount(0) != 1 || d.ServerCount(0) != 1 || d.FansOut(0) || !d.FansOut(2) {
		t.Errorf("defaults: %d clients, %d servers, fans out %v", d.ClientCount(0), d.ServerCount(0), d.FansOut(0))
	}
}

// TestStoredTestsReadBack: a test as a run's JSON stored it before its
// parameters were held by name (durations in nanoseconds) reads back to
// the same client, and so does one written today from a spec.
func TestStoredTestsReadBack(t *testing.T) {
	old := `{"name":"u","workload":"rr","protocol":"udp","duration":2000000000,"omit":1000000000,"parallel":2,"request":64,"response":1024,"timeout":500000000,"repetitions":3}`
	want := []string{"rr", "--server", "198.18.0.2:5202", "--json", "--time", "2s", "--interval", "1s",
		"--protocol", "udp", "--omit", "1s", "--parallel", "2", "--request", "64", "--response", "1024", "--timeout", "500ms"}
	var stored Test
	if err := json.Unmarshal([]byte(old), &stored); err != nil {
		t.Fatal(err)
	}
	args := func(tc Test) []string {
		t.Helper()
		cases, err := Expand([]Test{tc})
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		return cases[0].ClientArgs("198.18.0.2")
	}
	if got := args(stored); !slices.Equal(got, want) || stored.Repetitions != 3 || stored.Name != "u" {
		t.Errorf("stored test %+v:\n got %q\nwant %q", stored, got, want)
	}
	var fromSpec struct{ Tests []Test }
	if err := yaml.Unmarshal([]byte("tests: [{name: u, workload: rr, protocol: udp, duration: 2s, omit: 1000ms, parallel: 2, request: 64, response: 1024, timeout: 0.5s}]"), &fromSpec); err != nil {
		t.Fatal(err)
	}
	registry.Canonical(fromSpec.Tests)
	b, err := json.Marshal(fromSpec.Tests[0])
	if err != nil || string(b) != strings.Replace(old, `,"repetitions":3`, "", 1) {
		t.Errorf("written as %s, %v; want as before parameters were held by name:\n%s", b, err, old)
	}
	var again Test
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if got := args(again); !slices.Equal(got, want) {
		t.Errorf("written %s, read back:\n got %q\nwant %q", b, got, want)
	}
	read := []Test{again}
	registry.Canonical(read) // as spec.Spec does when it reads a run's JSON
	if y, err := yaml.Marshal(read[0]); err != nil || !strings.Contains(string(y), "request: 64") || !strings.Contains(string(y), "omit: 1s") {
		t.Errorf("as YAML: %s, %v", y, err)
	}
}
