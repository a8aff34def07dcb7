package docker_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/modes"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// TestOptions: the driver decodes --docker-host itself and refuses, in the
// flag's words, what an existing engine cannot run; the modes it names as
// runnable are those that say they build on one host (lab.SingleHost).
func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flag   string
		modes  []string
		cores  int
		want   string // "" for accepted
		single bool   // the engine is used
	}{
		{"no flag: emulated hosts", "", []string{"bare", "overlay"}, 1, "", false},
		{"an existing engine", "unix:///x.sock", []string{"bare", "host", "bridge"}, 0, "", true},
		{"not a URL of an engine", "/var/run/docker.sock", []string{"bare"}, 0, `--docker-host "/var/run/docker.sock": want unix:///PATH or tcp://HOST:PORT`, false},
		{"a mode that spans hosts", "unix:///x.sock", []string{"bare", "overlay"}, 0, "--docker-host: mode overlay needs emulated hosts, a dockerd each; on one engine only bare, host and bridge run (use --modes)", false},
		{"conditions", "unix:///x.sock", []string{"bare"}, 1, "--docker-host: conditions (cores=1) change the hosts", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec.Spec{Driver: docker.Name, Modes: tc.modes, Conditions: conditions.Set{Cores: tc.cores}}
			flags := map[string]string{}
			if tc.flag != "" {
				flags[docker.FlagDockerHost] = tc.flag
			}
			o, err := docker.Driver{}.Options(lab.OptionsInput{Spec: s, Flags: flags, Modes: modes.All()})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %v, want one line with %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := o.(docker.Options).DockerHost != ""; got != tc.single {
				t.Errorf("options %+v: existing engine %v, want %v", o, got, tc.single)
			}
			if shares := (docker.Driver{}).Capabilities(o).SharesStack; shares != tc.single {
				t.Errorf("SharesStack = %v, want %v", shares, tc.single)
			}
		})
	}
}
