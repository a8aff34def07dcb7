package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report/export"
	"github.com/cnperf/cnperf/internal/report/export/exporttest"
)

// TestExportFeeds: `cnperf export --format openmetrics|opensearch|perfdash`
// writes, to stdout and to -o, what each format's rules read.
func TestExportFeeds(t *testing.T) {
	dir := importedRun(t)
	for _, format := range []string{"openmetrics", "opensearch", "perfdash"} {
		t.Run(format, func(t *testing.T) {
			code, stdout, stderr := run("export", dir, "--format", format)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			out := filepath.Join(t.TempDir(), "out")
			if code, _, stderr := run("export", dir, "--format", format, "--index", "cnperf-test", "-o", out); code != 0 {
				t.Fatalf("-o: exit %d: %s", code, stderr)
			}
			file, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			switch format {
			case "openmetrics":
				err = exporttest.CheckOpenMetrics([]byte(stdout))
			case "opensearch":
				var n int
				if n, err = exporttest.CheckBulk([]byte(stdout), export.DefaultIndex); err == nil && n == 0 {
					t.Error("no documents")
				}
				if _, err := exporttest.CheckBulk(file, "cnperf-test"); err != nil {
					t.Errorf("--index: %v", err)
				}
			case "perfdash":
				_, err = exporttest.DecodePerfDash([]byte(stdout))
			}
			if err != nil {
				t.Errorf("%v\n%s", err, stdout)
			}
			if format != "opensearch" && string(file) != stdout {
				t.Error("-o wrote other bytes than stdout")
			}
		})
	}
}

// TestExportStacksRefusals: --stacks on a run without profiling, or beside
// --format or -o, is bad input (exit 2) in one line; nothing is written.
func TestExportStacksRefusals(t *testing.T) {
	dir := importedRun(t)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"unprofiled run": {nil, "no profiled cell"},
		"with --format":  {[]string{"--format", "samples"}, "takes no --format or -o"},
		"with -o":        {[]string{"-o", "x.folded"}, "takes no --format or -o"},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "stacks")
			code, _, stderr := run(append([]string{"export", dir, "--stacks", out}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, %q; want 2 and one line with %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("wrote the directory anyway")
			}
		})
	}
}
