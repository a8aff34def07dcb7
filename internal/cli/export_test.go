package cli_test

import (
	"os"
	"path/filepath"
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
