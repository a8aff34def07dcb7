package cli

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/workload/commands"
)

// TestServeListsEveryServer: `cnperf serve` has a command for every
// workload's server as the registry lists them, ping-pong's included, and
// its one-line summary names each.
func TestServeListsEveryServer(t *testing.T) {
	var want []string
	for _, c := range commands.Servers(console(nil, nil)) {
		want = append(want, c.Name())
	}
	code, stdout, _ := mainOut("--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	var summary string
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "serve" {
			summary = line
		}
	}
	code, help, _ := mainOut("serve", "--help")
	if code != 0 {
		t.Fatalf("serve --help: exit %d", code)
	}
	for _, name := range append(want, "grid", "ping", "pong") {
		if !strings.Contains(summary, name) {
			t.Errorf("cnperf --help's serve line %q does not name %s", summary, name)
		}
		if !strings.Contains(help, "\n  "+name+" ") {
			t.Errorf("serve --help lists no %s:\n%s", name, help)
		}
	}
}
