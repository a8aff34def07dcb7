package registry_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// TestDeclarationsHold: every workload's parameters are declared so that
// what derives from them works: names no test field takes, flags and short
// flags the shell does not take already, bounds in order, sweeps only of
// numbers and rates, choices with their values.
func TestDeclarationsHold(t *testing.T) {
	common := []string{"name", "workload", "duration", "interval", "repetitions", "sweep", "clients", "servers", "pairs", "processes"}
	for _, w := range append(registry.All(), echo{}, echoTTL{}) {
		names := map[string]bool{}
		flags := map[string]bool{"--server": true, "--time": true, "--interval": true, "--json": true, "--help": true}
		shorts := map[string]bool{"c": true, "t": true, "i": true, "h": true}
		for _, p := range w.Params() {
			where := w.Name() + "." + p.Name
			switch {
			case p.Name == "" || strings.ToLower(p.Name) != p.Name || slices.Contains(common, p.Name) || names[p.Name]:
				t.Errorf("%s: a name every test has, taken twice, or not lower case", where)
			case p.Flag != "" && (!strings.HasPrefix(p.Flag, "--") || flags[p.Flag]):
				t.Errorf("%s: flag %q taken or not --NAME", where, p.Flag)
			case p.Short != "" && (len(p.Short) != 1 || shorts[p.Short] || p.Flag == ""):
				t.Errorf("%s: short flag %q taken, not one letter, or without a flag", where, p.Short)
			case p.Sweep && p.Kind != workload.Whole && p.Kind != workload.Rate:
				t.Errorf("%s: only whole numbers and rates are swept", where)
			case p.Kind == workload.Choice && (len(p.Choices) == 0 || (p.FlagSets != "" && !slices.Contains(p.Choices, p.FlagSets))):
				t.Errorf("%s: choices %q, flag sets %q", where, p.Choices, p.FlagSets)
			}
			for _, b := range p.Bounds {
				if b.Min > b.Max || b.Min < 0 || (b.Protocol != "" && !slices.Contains(protocols(w), b.Protocol)) {
					t.Errorf("%s: bound %+v", where, b)
				}
			}
			names[p.Name], flags[p.Flag], shorts[p.Short] = true, p.Flag != "", p.Short != ""
		}
	}
}

func protocols(w workload.Socket) []string {
	if p, ok := workload.Declared(w, "protocol"); ok {
		return p.Choices
	}
	return nil
}
