package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/testutil"
)

// TestFanOutOnOneHost runs Bryzgalov's (2014) fan-out small (he measured
// containers talking to each other on one host): a server and client
// containers on one host, many clients at once against one server, pairs
// against several, and several clients per container; every client's
// records carry who it was, summary shows the per-container figures, and
// the labs are gone afterwards.
func TestFanOutOnOneHost(t *testing.T) {
	testutil.RequireRoot(t)
	bin := testutil.Binary(t)
	tmp := t.TempDir()
	specPath := filepath.Join(tmp, "fan.yaml")
	const doc = `name: fan
modes: [bare, veth-routed, bridge-routed]
reference: bare
placement: {hosts: same, servers: 3, clients: 3}
tests:
  - workload: stream
    duration: 1s
    sweep: {param: clients, values: [1, 3]}
  - workload: stream
    duration: 1s
    pairs: true
  - workload: rr
    duration: 1s
    clients: 2
    processes: 2
`
	if err := os.WriteFile(specPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "run", specPath, "-o", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	recs, costs := readRecords(t, dir)
	// Per case and mode, the clients that printed a total, and the servers
	// they ran against.
	type key struct{ mode, kase string }
	clients := map[key]map[string]bool{}
	servers := map[key]map[string]bool{}
	for _, r := range recs {
		if r.Kind != record.KindTotal {
			continue
		}
		k := key{r.Mode, r.Case}
		if clients[k] == nil {
			clients[k], servers[k] = map[string]bool{}, map[string]bool{}
		}
		if r.Client == "" || r.Server == "" {
			t.Errorf("%s %s: a fan-out total without its client or server: %+v", r.Mode, r.Case, r)
		}
		clients[k][r.Client+"/"+string(rune('0'+r.Process))] = true
		servers[k][r.Server] = true
	}
	for _, mode := range []string{"bare", "veth-routed", "bridge-routed"} {
		for _, tc := range []struct {
			kase             string
			clients, servers int
		}{
			{"stream clients=1", 1, 1},
			{"stream clients=3", 3, 1},
			{"stream", 3, 3}, // pairs: each client its own server
			{"rr", 4, 1},     // 2 containers × 2 processes
		} {
			k := key{mode, tc.kase}
			if len(clients[k]) != tc.clients || len(servers[k]) != tc.servers {
				t.Errorf("%s %q: totals from %d clients against %d servers (%v, %v), want %d and %d",
					mode, tc.kase, len(clients[k]), len(servers[k]), clients[k], servers[k], tc.clients, tc.servers)
			}
		}
	}
	if len(costs) != 12 {
		t.Errorf("%d cost lines, want one per cell (12)", len(costs))
	}
	out, err := exec.Command(bin, "summary", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("summary: %v\n%s", err, out)
	}
	for _, want := range []string{"stream clients=3", "Mbit/s per client", "fairness", "trans/s per client"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	assertNothingLeft(t, bin)
}
