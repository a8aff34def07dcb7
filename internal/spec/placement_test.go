package spec_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
)

func TestPlacement(t *testing.T) {
	const head = "name: x\nmodes: [bare, bridge]\nreference: bare\n"
	tests := []struct {
		name, doc string
		want      string // "" for no error
	}{
		{"one host, fan-out", head + "placement: {hosts: same, clients: 20}\ntests:\n  - workload: stream\n    sweep: {param: clients, values: [1, 2, 4, 8, 16, 20]}\n", ""},
		{"pairs", head + "placement: {hosts: same, servers: 8, clients: 8}\ntests:\n  - workload: stream\n    pairs: true\n", ""},
		{"containers x processes", head + "placement: {hosts: same, clients: 16}\ntests:\n  - workload: stream\n    clients: 16\n    processes: 16\n", ""},
		{"no placement: one client", head + "tests:\n  - workload: stream\n", ""},
		{"unknown field", head + "placement: {colour: red}\ntests:\n  - workload: stream\n", `unknown field "placement.colour"`},
		{"bad hosts", head + "placement: {hosts: near}\ntests:\n  - workload: stream\n", `placement.hosts "near": want same`},
		{"too many clients", head + "placement: {clients: 300}\ntests:\n  - workload: stream\n", "placement.clients 300: must be in 1..250"},
		{"negative servers", head + "placement: {servers: -2}\ntests:\n  - workload: stream\n", "placement.servers -2"},
		{"one host full", head + "placement: {hosts: same, servers: 100, clients: 200}\ntests:\n  - workload: stream\n", "more than 250 containers"},
		{"test wants more clients", head + "placement: {clients: 4}\ntests:\n  - workload: stream\n    clients: 8\n", "tests[0].clients 8: the placement has 4 client containers (placement.clients)"},
		{"no placement, more clients", head + "tests:\n  - workload: rr\n    clients: 2\n", "tests[0].clients 2: the placement has 1"},
		{"swept past the placement", head + "placement: {clients: 4}\ntests:\n  - workload: stream\n    sweep: {param: clients, values: [1, 8]}\n", "tests[0] (clients=8): clients 8"},
		{"pairs need servers", head + "placement: {clients: 4}\ntests:\n  - workload: stream\n    pairs: true\n", "tests[0].servers 4: the placement has 1 server containers"},
		{"fan-in bound", head + "placement: {clients: 250}\ntests:\n  - workload: stream\n    processes: 64\n", "tests[0].processes 64: 16000 clients at once on one server, more than 1024"},
		{"ping-pong apart", head + "placement: {hosts: apart}\n", ""},
		{"ping-pong, default hosts", head + "placement: {servers: 1}\n", ""},
		{"ping-pong fan-out", head + "placement: {clients: 2}\n", "placement.clients 2: ping-pong runs one siege"},
		{"ping-pong servers", head + "placement: {servers: 2}\n", "placement.servers 2: ping-pong has one ping and one pong"},
		{"ping-pong on one host", head + "placement: {hosts: same}\n", "placement.hosts same: ping-pong's siege runs on a host of its own"},
		{"ping-pong bad hosts", head + "placement: {hosts: near}\n", `placement.hosts "near": ping-pong takes apart`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spec.Parse(strings.NewReader(tc.doc), "test.yaml")
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Parse: %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}
