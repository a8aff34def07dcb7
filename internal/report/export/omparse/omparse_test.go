// Package omparse reads every OpenMetrics export golden of the stored runs
// (internal/report/testdata/*/*.openmetrics) with Prometheus' own
// OpenMetrics parser, the one `promtool tsdb create-blocks-from
// openmetrics` uses. It is a module of its own so that Prometheus and what
// it needs stay out of cnperf's go.mod: run it with
//
//	cd internal/report/export/omparse && go test ./...
//
// cnperf's own tests check that the goldens are what `cnperf export
// --format openmetrics` writes (internal/report/feed_test.go).
package omparse

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
)

func TestGoldensParse(t *testing.T) {
	files, err := filepath.Glob("../../testdata/*/*.openmetrics")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no OpenMetrics goldens found")
	}
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p := textparse.NewOpenMetricsParser(b, labels.NewSymbolTable())
			series, seen := 0, map[string]bool{}
			for {
				e, err := p.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("after %d series: %v", series, err)
				}
				if e != textparse.EntrySeries {
					continue
				}
				var l labels.Labels
				p.Labels(&l)
				if seen[l.String()] {
					t.Errorf("series %s twice", l)
				}
				seen[l.String()] = true
				if _, ts, _ := p.Series(); ts == nil {
					t.Errorf("series %s has no timestamp: the importer needs one", l)
				}
				series++
			}
			if series == 0 {
				t.Error("no series")
			}
			t.Logf("%d series", series)
		})
	}
}

// TestParserRefuses: the parser this test trusts refuses what breaks the
// rules the goldens keep, so a golden that broke them would fail above.
// It lets through a repeated TYPE line, a family resumed after another
// and an unknown escape in a label value; exporttest.CheckOpenMetrics,
// which cnperf's own tests run, refuses those too.
func TestParserRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"no EOF":            "# TYPE a_seconds gauge\na_seconds{x=\"1\"} 1 1\n",
		"unit not a suffix": "# TYPE a gauge\n# UNIT a seconds\na{x=\"1\"} 1 1\n# EOF\n",
		"text after EOF":    "# TYPE a gauge\na 1 1\n# EOF\na 2 2\n",
	} {
		p := textparse.NewOpenMetricsParser([]byte(text), labels.NewSymbolTable())
		var err error
		for err == nil {
			_, err = p.Next()
		}
		if errors.Is(err, io.EOF) {
			t.Errorf("%s: accepted", name)
		}
	}
}
