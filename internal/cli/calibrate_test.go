package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCalibrate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ppb")
	if code, _, stderr := run("import", "--format", "ppbench", "../report/importer/testdata/ppbench.csv", "-o", dir); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := run("calibrate", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// bare: 1000 B in 3 and 4 ms, 250 kB in 40.2 ms, 10 in flight
	// (analysis' TestLoadCalibrationImportedPPBench).
	for _, want := range []string{
		"series bare (ppbench, concurrency 10)",
		"round trip: 335µs (the smallest messages' time over concurrency 10: a lower bound; 2 samples)",
		"bandwidth:  542.8 Mbit/s",
		"conditions:\n  bandwidth: 542779kbit\n  zone_delay: 168us",
		"calibrate:\n  from: " + dir + "\n  series: bare\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", filepath.Join(dir, "nope")}, "calibrate.from "},
		{[]string{"calibrate", dir, "--series", "weave"}, "calibrate.series weave: run " + dir + " has no series weave (its run.json lists bare, docker)"},
		{[]string{"calibrate", dir, "--series", "docker"}, "2 successful samples with a duration, fewer than 3"},
		{[]string{"calibrate"}, "accepts 1 arg"},
	} {
		code, _, stderr := run(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
