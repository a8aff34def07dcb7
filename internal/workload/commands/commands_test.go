package commands_test

import (
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/commands"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// TestEveryWorkloadHasCommands: the commands list the registry's
// workloads, in its order, each client named as its workload and taking
// every parameter it declares as its flag.
func TestEveryWorkloadHasCommands(t *testing.T) {
	con := workload.Console{DefaultListen: func(int) string { return "" }}
	all := commands.All()
	if got, want := len(all), 1+len(registry.All()); got != want {
		t.Fatalf("%d workloads have commands, the registry lists %d", got, want)
	}
	// Ping-pong first: its client is siege, its servers ping and pong,
	// as its descriptor runs them.
	pp, _ := registry.Sweep("pingpong")
	if all[0].Name != pp.Name() || all[0].Client(con).Name() != "siege" {
		t.Errorf("commands[0] is %s with client %s, want ping-pong's siege", all[0].Name, all[0].Client(con).Name())
	}
	var ppServers []string
	for _, serve := range all[0].Serve {
		ppServers = append(ppServers, serve(con).Name())
	}
	for _, s := range pp.Servers(workload.SweepSettings{}, func(string) workload.SweepAddr { return workload.SweepAddr{} }) {
		if !slices.Contains(ppServers, s.Args[1]) {
			t.Errorf("ping-pong's server %s runs `serve %s`, which has no command (%q)", s.Role, s.Args[1], ppServers)
		}
	}
	for i, w := range registry.All() {
		c := all[i+1]
		if c.Name != w.Name() {
			t.Fatalf("commands[%d] is %s, the registry's %s", i, c.Name, w.Name())
		}
		cmd := c.Client(con)
		if cmd.Name() != w.Name() {
			t.Errorf("%s's client is `cnperf %s`", w.Name(), cmd.Name())
		}
		for _, p := range w.Params() {
			if p.Flag != "" && cmd.Flags().Lookup(p.Flag[2:]) == nil {
				t.Errorf("%s's client lacks %s (parameter %s)", w.Name(), p.Flag, p.Name)
			}
		}
		for _, f := range []string{"server", "time", "interval", "json"} {
			if cmd.Flags().Lookup(f) == nil {
				t.Errorf("%s's client lacks --%s", w.Name(), f)
			}
		}
		for _, short := range []string{"c", "t", "i"} {
			if cmd.Flags().ShorthandLookup(short) == nil {
				t.Errorf("%s's client lacks -%s", w.Name(), short)
			}
		}
		srv := c.Serve[0](con)
		if args := w.Server().Args; len(args) < 2 || args[0] != "serve" || args[1] != srv.Name() {
			t.Errorf("%s's server runs %q, its command is `serve %s`", w.Name(), args, srv.Name())
		}
	}
	var names []string
	for _, s := range commands.Servers(con) {
		names = append(names, s.Name())
	}
	if !slices.Equal(names, []string{"ping", "pong", "stream", "rr", "udp", "grid", "conns"}) {
		t.Errorf("servers %q", names)
	}
}
