package suite

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestExpandErrors(t *testing.T) {
	tests := []struct {
		name string
		test Test
		want string
	}{
		{"unknown workload", Test{Workload: "ping"}, `tests[0]: workload "ping": unknown`},
		{"datagram too big", Test{Workload: "datagram", Length: 70000}, "tests[0]: datagram: --size 70000"},
		{"stream udp too big", Test{Workload: "stream", Protocol: "udp", Length: 65508}, "65507"},
		{"negative duration", Test{Workload: "rr", Duration: -time.Second}, "duration -1s: must be >= 0"},
		{"unknown protocol", Test{Workload: "stream", Protocol: "sctp"}, `"sctp"`},
		{"unknown rr mode", Test{Workload: "rr", Protocol: "quic"}, "quic"},
		{"param of another workload", Test{Workload: "jitter", Request: 10}, "request: not a parameter of jitter"},
		{"bad rate", Test{Workload: "jitter", Rate: "fast"}, `rate "fast"`},
		{"sweep unknown param", Test{Workload: "stream", Sweep: &Sweep{Param: "request", Values: []string{"1"}}}, `sweep.param "request": stream sweeps length, parallel, rate`},
		{"sweep both", Test{Workload: "stream", Sweep: &Sweep{Param: "length", Values: []string{"1"}, Step: 1}}, "not both"},
		{"sweep no step", Test{Workload: "stream", Sweep: &Sweep{Param: "length", From: 1000, To: 2000}}, "want step > 0"},
		{"sweep backwards", Test{Workload: "stream", Sweep: &Sweep{Param: "length", From: 2000, To: 1000, Step: 100}}, "to >= from"},
		{"sweep too long", Test{Workload: "stream", Sweep: &Sweep{Param: "length", From: 1, To: 100000, Step: 1}}, "more than 1000 values"},
		{"sweep not integer", Test{Workload: "stream", Sweep: &Sweep{Param: "length", Values: []string{"big"}}}, `sweep.values "big": want an integer`},
		{"sweep value invalid", Test{Workload: "stream", Protocol: "udp", Sweep: &Sweep{Param: "length", Values: []string{"1400", "70000"}}}, "sweep length=70000"},
		{"negative repetitions", Test{Workload: "rr", Repetitions: -1}, "repetitions -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Expand([]Test{tc.test})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Expand: %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestExpandSweep(t *testing.T) {
	cases, err := Expand([]Test{
		{Workload: "rr", Protocol: "udp"},
		{Workload: "stream", Protocol: "udp", Rate: "100M", Sweep: &Sweep{Param: "length", From: 1000, To: 2000, Step: 100}},
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
	if c := cases[1]; c.Label != "stream udp length=1000" || c.Test.Length != 1000 || c.Index != 1 || c.Test.Sweep != nil {
		t.Errorf("case 1: %+v", c)
	}
	if c := cases[11]; c.Value != "2000" || c.Test.Length != 2000 {
		t.Errorf("case 11: %+v", c)
	}
	if c := cases[13]; c.Label != "big rate=10M" || c.Test.Rate != "10M" || c.Index != 2 {
		t.Errorf("case 13: %+v", c)
	}
}

func TestClientArgs(t *testing.T) {
	tests := []struct {
		test Test
		want []string
	}{
		{Test{Workload: "stream"}, []string{"stream", "--server", "198.18.0.2:5201", "--json", "--time", "10s", "--interval", "1s"}},
		{Test{Workload: "stream", Protocol: "udp", Duration: 5 * time.Second, Omit: time.Second, Parallel: 4, Length: 1400, Rate: "1G"},
			[]string{"stream", "--server", "198.18.0.2:5201", "--json", "--time", "5s", "--interval", "1s", "--udp", "--omit", "1s", "--parallel", "4", "--length", "1400", "--bitrate", "1G"}},
		{Test{Workload: "rr", Protocol: "crr", Request: 64, Response: 1024, Timeout: 2 * time.Second},
			[]string{"rr", "--server", "198.18.0.2:5202", "--json", "--time", "10s", "--interval", "1s", "--mode", "crr", "--request", "64", "--response", "1024", "--timeout", "2s"}},
		{Test{Workload: "jitter", Rate: "10M", Length: 1470, Duration: 120 * time.Second},
			[]string{"jitter", "--server", "198.18.0.2:5203", "--json", "--time", "2m0s", "--interval", "1s", "--length", "1470", "--bitrate", "10M"}},
		{Test{Workload: "datagram", Count: 1000},
			[]string{"datagram", "--server", "198.18.0.2:5203", "--json", "--time", "0s", "--interval", "1s", "--count", "1000"}},
	}
	for _, tc := range tests {
		got := Case{Test: tc.test}.ClientArgs("198.18.0.2")
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
		s := ServerFor(tc.workload)
		if s.Role != tc.role || s.Port != tc.port || !slices.Contains(s.Protocols, "udp") || !slices.Contains(s.Protocols, "tcp") {
			t.Errorf("%s: %+v", tc.workload, s)
		}
	}
}

func TestWrap(t *testing.T) {
	c := Case{Test: Test{Workload: "stream"}, Label: "stream", Index: 2}
	tests := []struct {
		c    Case
		line string
		kind string
		err  string
	}{
		{c, `{"workload":"stream","protocol":"tcp","stream":-1,"start":0,"end":1,"bytes":10}`, "interval", ""},
		{c, `{"workload":"stream","protocol":"tcp","duration_s":10,"receiver_bytes":5}`, "total", ""},
		{Case{Test: Test{Workload: "rr"}}, `{"workload":"rr","type":"interval"}`, "interval", ""},
		{Case{Test: Test{Workload: "rr"}}, `{"workload":"rr","type":"result"}`, "total", ""},
		{Case{Test: Test{Workload: "jitter"}}, `{"workload":"jitter","total":true}`, "total", ""},
		{Case{Test: Test{Workload: "datagram"}}, `{"workload":"datagram","total":false}`, "interval", ""},
		{c, `Connecting to ...`, "", "not JSON"},
		{c, `{"workload":"rr","type":"result"}`, "", `"rr" record in a stream test`},
	}
	for _, tc := range tests {
		r, err := Wrap(tc.c, []byte(tc.line))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil || r.Kind != tc.kind || string(r.Data) != tc.line {
			t.Errorf("%s: %+v, %v; want kind %s", tc.line, r, err, tc.kind)
		}
	}
	r, _ := Wrap(c, []byte(`{"workload":"stream","duration_s":1}`))
	if r.Test != 2 || r.Case != "stream" {
		t.Errorf("record does not carry its case: %+v", r)
	}
}

func TestMovedBytes(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int64
	}{
		{`{"workload":"stream","receiver_bytes":1000,"sender_bytes":1200}`, 1000},
		{`{"workload":"rr","transactions":10,"request_size":1,"response_size":99}`, 1000},
		{`{"workload":"jitter","bytes":4410}`, 4410},
		{`not json`, 0},
	} {
		if got := MovedBytes(json.RawMessage(tc.line)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.line, got, tc.want)
		}
	}
}

func TestPlanned(t *testing.T) {
	for _, tc := range []struct {
		test Test
		want time.Duration
	}{
		{Test{Workload: "stream"}, 10 * time.Second},
		{Test{Workload: "stream", Duration: 5 * time.Second, Omit: time.Second}, 6 * time.Second},
		{Test{Workload: "datagram", Count: 100}, 0},
		{Test{Workload: "datagram", Count: 100, Duration: 3 * time.Second}, 3 * time.Second},
	} {
		if got := tc.test.Planned(); got != tc.want {
			t.Errorf("%+v: Planned() = %s, want %s", tc.test, got, tc.want)
		}
	}
}
