package run

import (
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/record"
)

// seen is a runtime whose processes this machine sees as sight says.
type seen struct {
	lab.BaseRuntime
	lab.Launcher // starts nothing
	sight        lab.Sight
}

func (s seen) Alive() error     { return nil }
func (s seen) Sight() lab.Sight { return s.sight }

// TestLoadMeter: which runs measure their cells' load, and which can tell
// outside work from their own, from what each lab's runtime sees.
func TestLoadMeter(t *testing.T) {
	var (
		own      = lab.Sight{Local: true, Own: true}   // netns, docker's own engines
		shared   = lab.Sight{Local: true, Own: false}  // an existing engine, a cluster
		elsewhre = lab.Sight{Local: false, Own: false} // other machines' engines
	)
	envOf := func(name string, s lab.Sight) *env {
		return &env{lab: &lab.Lab{Lab: record.Lab{Name: name}, Runtime: seen{sight: s}}}
	}
	for _, c := range []struct {
		name       string
		envs       []*env
		meter, own bool
	}{
		{"netns", []*env{envOf("b", own), envOf("a", own)}, true, true},
		{"own docker engines", []*env{envOf("a", own), envOf("b", own)}, true, true},
		{"an existing engine", []*env{envOf("a", shared)}, true, false},
		{"a cluster", []*env{envOf("a", own), envOf("b", shared)}, true, false},
		{"other machines' engines", []*env{envOf("a", elsewhre)}, false, false},
	} {
		envs := map[string]*env{}
		for _, e := range c.envs {
			envs[e.lab.Name] = e
		}
		m, own := loadMeter(envs)
		if (m != nil) != c.meter || own != c.own {
			t.Errorf("%s: meter %v own %v, want %v %v", c.name, m != nil, own, c.meter, c.own)
		}
		if m != nil && !slices.Equal(m.Labs, []string{"a", "b"}[:len(c.envs)]) {
			t.Errorf("%s: labs %v", c.name, m.Labs)
		}
	}
}
