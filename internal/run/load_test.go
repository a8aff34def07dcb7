package run

import (
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/kube"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
)

// TestLoadMeter: which runs measure their cells' load, and which can tell
// outside work from their own.
func TestLoadMeter(t *testing.T) {
	envOf := func(name, driver string) *env {
		return &env{driver: driver, lab: &lab.Lab{Lab: record.Lab{Name: name}}}
	}
	for _, c := range []struct {
		name       string
		envs       []*env
		dockerHost string
		engines    bool
		meter, own bool
	}{
		{"netns", []*env{envOf("b", netns.Name), envOf("a", netns.Name)}, "", false, true, true},
		{"own docker engines", []*env{envOf("a", netns.Name), envOf("b", docker.Name)}, "", false, true, true},
		{"an existing engine", []*env{envOf("a", docker.Name)}, "unix:///var/run/docker.sock", false, true, false},
		{"a cluster", []*env{envOf("a", netns.Name), envOf("b", kube.Name)}, "", false, true, false},
		{"other machines' engines", []*env{envOf("a", docker.Name)}, "", true, false, false},
	} {
		var s spec.Spec
		if c.engines {
			s.Engines = &spec.Engines{Hosts: map[string]string{"siege": "tcp://198.18.0.9:2375"}}
		}
		envs := map[string]*env{}
		for _, e := range c.envs {
			envs[e.lab.Name] = e
		}
		m, own := loadMeter(s, envs, c.dockerHost)
		if (m != nil) != c.meter || own != c.own {
			t.Errorf("%s: meter %v own %v, want %v %v", c.name, m != nil, own, c.meter, c.own)
		}
		if m != nil && !slices.Equal(m.Labs, []string{"a", "b"}[:len(c.envs)]) {
			t.Errorf("%s: labs %v", c.name, m.Labs)
		}
	}
}
