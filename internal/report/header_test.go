package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/importer"
	"github.com/cnperf/cnperf/internal/spec"
)

func TestHeaderLine(t *testing.T) {
	meta := func(m record.Machine) *record.Meta {
		return &record.Meta{Spec: spec.Spec{Name: "r"}, Status: "complete", Started: time.Date(2026, 11, 22, 17, 56, 0, 0, time.UTC), Machine: m}
	}
	for _, tc := range []struct {
		m    record.Machine
		want string
	}{
		{record.Machine{CPUModel: "AMD EPYC", CPUs: 2, Kernel: "6.1"}, "r  2026-11-22 17:56  status complete  AMD EPYC, 2 CPUs, kernel 6.1"},
		{record.Machine{Hostname: "imported"}, "r  2026-11-22 17:56  status complete"},
		{record.Machine{Kernel: "6.1"}, "r  2026-11-22 17:56  status complete  kernel 6.1"},
		{record.Machine{CPUs: 4}, "r  2026-11-22 17:56  status complete  4 CPUs"},
	} {
		if got := headerLine(meta(tc.m)); got != tc.want {
			t.Errorf("headerLine(%+v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

// TestImportSummaryHeader: the summary of an imported run (no machine)
// says nothing of CPUs or kernel instead of "0 CPUs, kernel ".
func TestImportSummaryHeader(t *testing.T) {
	f, err := os.Open(filepath.Join("importer", "testdata", "ab.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	samples, info, err := importer.ApacheBench(f, "ab.csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := importer.WriteRun(dir, samples, info, ""); err != nil {
		t.Fatal(err)
	}
	var out, warn bytes.Buffer
	run, err := ReadRun(dir, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if err := Summary(&out, run, "", true); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if strings.Contains(first, "CPUs") || strings.Contains(first, "kernel") || strings.HasSuffix(first, " ") ||
		!strings.HasSuffix(first, "status imported") {
		t.Errorf("summary header %q: want the run's name, start and status only", first)
	}
}
