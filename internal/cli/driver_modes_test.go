package cli_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/cli"
)

// TestModeItsDriverCannotBuild: a mode its driver has no build for is bad
// input, refused in one line before any lab is built (the docker driver
// has no build of the user-space overlays).
func TestModeItsDriverCannotBuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"run", []string{"run", "--preset", "tiny", "--driver", "docker", "--modes", "bare,overlay-encrypted"},
			"modes[1]: overlay-encrypted cannot be built on the docker driver (it builds bare, host, bridge, macvlan, overlay"},
		{"lab up", []string{"lab", "up", "x", "--mode", "overlay-encrypted", "--driver", "docker"},
			"--mode overlay-encrypted: the docker driver cannot build it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir()) // a run that went ahead would write here
			code, _, stderr := run(tc.args...)
			if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", code, stderr, cli.ExitUsage, tc.want)
			}
		})
	}
}
