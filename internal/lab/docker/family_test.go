package docker_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/modes"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// TestCheckFamily: the docker driver carries IPv6 and dual for the modes
// whose Docker build does (bare, host, bridge, macvlan) and refuses, in
// one line naming the mode, the family for the others, whatever the netns
// driver builds of them.
func TestCheckFamily(t *testing.T) {
	carries := map[string]bool{"bare": true, "host": true, "bridge": true, "macvlan": true}
	for _, m := range modes.All() {
		if !(docker.Driver{}).Builds(m) {
			continue
		}
		for _, f := range []string{conditions.IPv4, conditions.IPv6, conditions.Dual} {
			t.Run(m.Name()+"/"+f, func(t *testing.T) {
				err := docker.Driver{}.CheckFamily(m, conditions.Set{IPFamily: f})
				if f == conditions.IPv4 || carries[m.Name()] {
					if err != nil && !strings.Contains(err.Error(), "this kernel has no IPv6") {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				want := "lab: ip_family " + f + ": mode " + m.Name() + " carries ipv4 only on the docker driver"
				if err == nil || err.Error() != want {
					t.Fatalf("err %v, want %q", err, want)
				}
			})
		}
	}
}

// TestEngineFamily: IPv6 only on hosts cnperf emulates: an existing
// engine (--docker-host) and other machines' engines refuse it in one line
// before anything is dialled or built.
func TestEngineFamily(t *testing.T) {
	bare, err := drivers.Catalog().Mode("bare")
	if err != nil {
		t.Fatal(err)
	}
	v6 := conditions.Set{IPFamily: conditions.IPv6}
	for _, tc := range []struct {
		name string
		o    docker.Options
		want string
	}{
		{"existing engine", docker.Options{DockerHost: "unix:///x.sock"}, "lab: ip_family ipv6: the docker driver builds IPv6 on the hosts it emulates only"},
		{"other machines", docker.Options{Engines: map[string]string{"server": "tcp://192.0.2.1:2376"}}, "lab: ip_family ipv6: the docker driver builds IPv6 on the hosts it emulates only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := docker.Driver{}.Validate(lab.Config{Name: "fam", Mode: bare, Conditions: v6, Options: tc.o})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want one line starting %q", err, tc.want)
			}
		})
	}
	t.Run("--docker-host flag", func(t *testing.T) {
		s := spec.Spec{Driver: docker.Name, Modes: []string{"bare"}, Conditions: v6}
		_, err := docker.Driver{}.Options(lab.OptionsInput{Spec: s, Flags: map[string]string{docker.FlagDockerHost: "unix:///x.sock"}, Modes: modes.All()})
		want := "--docker-host: ip_family ipv6: cnperf builds IPv6 on the hosts it emulates only"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("err %v, want %q", err, want)
		}
	})
	t.Run("engines: block", func(t *testing.T) {
		// As a stored run holds the section.
		var e spec.Section
		if err := json.Unmarshal([]byte(`{"hosts": {"server": "tcp://192.0.2.1:2376"}}`), &e); err != nil {
			t.Fatal(err)
		}
		s := spec.Spec{Driver: docker.Name, Modes: []string{"bare"}, Conditions: v6, Engines: &e}
		_, err := docker.Driver{}.Options(lab.OptionsInput{Spec: s, Modes: modes.All()})
		want := "engines: ip_family ipv6: cnperf builds IPv6 on the hosts it emulates only"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("err %v, want %q", err, want)
		}
	})
}
