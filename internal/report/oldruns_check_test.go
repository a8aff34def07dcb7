package report_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/report/export"
	"github.com/cnperf/cnperf/internal/report/gate"
)

// The stored runs (oldruns_test.go) must also judge and export as they
// did: DIR.check.xml is the JUnit of `cnperf check DIR --baseline DIR
// --junit DIR.check.xml` (the run against itself: every headline ratio,
// with the busy-machine notes), DIR.ppbench.csv and DIR.samples.csv what
// `cnperf export DIR --format ppbench|samples` printed, kept where the
// export has rows (ping-pong and imports). The fixtures were written from
// the repository's root, so their paths carry internal/report/.
func TestStoredRunsCheckAndExportIdentically(t *testing.T) {
	for _, dir := range report.StoredRunDirs() {
		t.Run(strings.TrimPrefix(dir, "testdata/"), func(t *testing.T) {
			fromRoot := func(s string) string { return strings.ReplaceAll(s, "internal/report/"+dir, dir) }
			compare := func(golden string, got []byte) {
				t.Helper()
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if ws := fromRoot(string(want)); string(got) != ws {
					t.Errorf("%s differs from what cnperf wrote before (%d bytes, want %d)%s", golden, len(got), len(ws), firstDifference(string(got), ws))
				}
			}

			// check: the judgement `cnperf check DIR --baseline DIR` makes.
			results, err := gate.Judge(dir, gate.Criteria{Baselines: []string{dir}, MaxChange: gate.DefaultMaxChange}, func(string) {})
			if err != nil {
				t.Fatal(err)
			}
			var junit bytes.Buffer
			if err := gate.WriteJUnit(&junit, dir, results); err != nil {
				t.Fatal(err)
			}
			compare(dir+".check.xml", junit.Bytes())

			// export: what `cnperf export DIR --format F` writes.
			run, err := report.ReadRun(dir, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var pp, flat bytes.Buffer
			if err := export.Run(&pp, "ppbench", &run.Meta, run.PingPong, ""); err != nil {
				t.Fatal(err)
			}
			if err := export.Run(&flat, "samples", &run.Meta, run.PingPong, ""); err != nil {
				t.Fatal(err)
			}
			for _, e := range []struct {
				golden string
				got    []byte
			}{{dir + ".ppbench.csv", pp.Bytes()}, {dir + ".samples.csv", flat.Bytes()}} {
				if _, err := os.Stat(e.golden); errors.Is(err, fs.ErrNotExist) {
					// No rows to export (socket tests): only the header.
					if n := bytes.Count(e.got, []byte("\n")); n > 1 {
						t.Errorf("%s: the export has %d lines and no golden to compare them with", e.golden, n)
					}
					continue
				}
				compare(e.golden, e.got)
			}
		})
	}
}

// firstDifference shows where got and want first part, with some text
// around.
func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	if i == len(got) && i == len(want) {
		return ""
	}
	around := func(s string) string { return s[max(i-80, 0):min(i+80, len(s))] }
	return "\nfirst difference at byte " + strconv.Itoa(i) + ":\n got: " + around(got) + "\nwant: " + around(want)
}
